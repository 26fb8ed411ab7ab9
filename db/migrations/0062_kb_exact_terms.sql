-- Up Migration
-- Exact terms of a query (identifiers, names, quoted phrases) are found in chunks whatever their case,
-- accents and separators: kb_fold spells a text in lower case without accents (decomposed, marks
-- dropped, the letters that do not decompose spelled out), every run of other characters than letters
-- and digits one space, and a space between letters and digits, so "SKU-4471", "sku 4471" and
-- "SKU4471" all read "sku 4471", and "Zoë Müller" and "ZOE MULLER" both "zoe muller". The folded words,
-- with their positions and no stemming or stop words ('simple'), are stored with each chunk and indexed,
-- so a term is a phrase query: the index finds chunks holding its words, the stored vector checks their
-- order without folding the text again (folding costs about 0.2 ms per chunk, the check microseconds).

CREATE FUNCTION kb_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN btrim(regexp_replace(regexp_replace(regexp_replace(
  replace(replace(replace(replace(
    translate(lower(regexp_replace(normalize(t, NFKD), '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]', '', 'g')), 'øłđðħı', 'olddhi'),
    'ß', 'ss'), 'æ', 'ae'), 'œ', 'oe'), 'þ', 'th'),
  '[^[:alnum:]]+', ' ', 'g'), '([[:alpha:]])([[:digit:]])', '\1 \2', 'g'), '([[:digit:]])([[:alpha:]])', '\1 \2', 'g'));

CREATE FUNCTION kb_exact_tsv(content text) RETURNS tsvector LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN to_tsvector('simple'::regconfig, kb_fold(content));

ALTER TABLE kb_chunks ADD COLUMN exact_tsv tsvector GENERATED ALWAYS AS (kb_exact_tsv(content)) STORED;
CREATE INDEX kb_chunks_exact_idx ON kb_chunks USING gin (exact_tsv);

-- Down Migration
DROP INDEX kb_chunks_exact_idx;
ALTER TABLE kb_chunks DROP COLUMN exact_tsv;
DROP FUNCTION kb_exact_tsv(text);
DROP FUNCTION kb_fold(text);
