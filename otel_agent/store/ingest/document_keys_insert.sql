-- After documents_insert.sql: the lineage_keys rows of the documents just parsed ($1 as there).
INSERT INTO lineage_keys SELECT * FROM document_lineage_keys($1);
