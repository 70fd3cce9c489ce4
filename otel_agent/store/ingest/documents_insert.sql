-- After a batch's spans are stored, when the fold saw a retrieval span of another convention in it; $1 names
-- the table of the spans stored now (incoming_spans, or _new_spans on the re-delivery path). Their documents are
-- parsed once (store/schema/070_retrieval_documents.sql); document_keys_insert.sql then keys them.
INSERT INTO parsed_retrieval_documents SELECT * FROM retrieval_documents_in($1);
