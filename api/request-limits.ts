/**
 * Request line and headers beyond this are 431 (Node's default is 16 KiB): room for the longest query
 * string the document allows, percent-encoded (test/unit/request-size.test.ts holds every operation to it).
 */
export const MAX_REQUEST_HEADER_BYTES = 64 * 1024;
