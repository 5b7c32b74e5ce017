-- The ordered key-value table every store record lives in (store/keys.go
-- has the key layout). bytea compares bytewise, the order the store needs.
CREATE TABLE rlmpl_kv (
    k bytea PRIMARY KEY,
    v bytea NOT NULL
);
