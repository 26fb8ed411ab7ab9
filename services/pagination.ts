// The cursor formats and page shapes live in the db kit (db/kit/keyset.ts), with the SQL that pages;
// services and the API's schemas take them from here.
export {
  CreatedCursor,
  type CursorCodec,
  KeyCursor,
  NameCursor,
  VersionCursor,
  cursorPage,
  decodeCursor,
  encodeCursor,
  nextPage,
} from '../db/kit/keyset';
