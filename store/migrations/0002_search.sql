-- Ranked search on PostgreSQL's own full-text index (store/pgsearch.go).
-- A message's document is written in the transaction that appends it, so
-- every process searches what every other one has committed.

-- One row per message: filter columns, the lengths BM25 needs, the terms
-- the store's analyzer made of it as a tsvector (weights: A body,
-- B attachments, C author, D date) under a GIN index, and their
-- frequencies per field, {"term": [body, attach, author, date]}.
CREATE TABLE rlmpl_doc (
    conv bigint NOT NULL,
    seq bigint NOT NULL,
    role smallint NOT NULL,
    session text NOT NULL,
    at bigint NOT NULL, -- Record.When, Unix nanoseconds
    body_len integer NOT NULL,
    attach_len integer NOT NULL,
    terms tsvector NOT NULL,
    tf jsonb NOT NULL,
    PRIMARY KEY (conv, seq)
);
-- fastupdate off: a search never walks a pending list of recent entries
-- (14 ms for a selective term after a 100k-message import), and appends
-- pay for their entries as they go rather than in a sudden cleanup.
CREATE INDEX rlmpl_doc_terms ON rlmpl_doc USING gin (terms) WITH (fastupdate = off);

-- BM25 collection statistics per conversation (sums give the store's).
CREATE TABLE rlmpl_doc_stats (
    conv bigint PRIMARY KEY,
    docs bigint NOT NULL,
    body_docs bigint NOT NULL,
    body_tokens bigint NOT NULL,
    attach_docs bigint NOT NULL,
    attach_tokens bigint NOT NULL
);

-- Document frequencies per conversation and term, per field, and per
-- scored field the term's largest frequency in a document and the
-- shortest document holding it (2147483647 when none does): the bound
-- of its BM25 term that lets a search skip its documents.
CREATE TABLE rlmpl_df (
    conv bigint NOT NULL,
    term text NOT NULL,
    body integer NOT NULL,
    attach integer NOT NULL,
    author integer NOT NULL,
    date integer NOT NULL,
    body_max_tf integer NOT NULL,
    body_min_len integer NOT NULL,
    attach_max_tf integer NOT NULL,
    attach_min_len integer NOT NULL,
    PRIMARY KEY (conv, term)
);
CREATE INDEX rlmpl_df_term ON rlmpl_df (term);

-- The analyzer the documents were made with (set by the first store that
-- opens the schema) and whether every message stored before this version
-- has its document yet (the first open after the migration writes them).
CREATE TABLE rlmpl_search (
    id smallint PRIMARY KEY CHECK (id = 1),
    language text,
    complete boolean NOT NULL
);
INSERT INTO rlmpl_search (id, language, complete)
SELECT 1, NULL, NOT EXISTS (SELECT 1 FROM rlmpl_kv);
