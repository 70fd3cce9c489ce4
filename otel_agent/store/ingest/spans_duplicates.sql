-- How many of the batch's spans are already stored (usually 0; repeats within the batch are
-- counted by the writer with pyarrow).
-- A re-delivered span is identical, start_time included, so stored duplicates are found with a semi join on
-- (start_time, trace_id, span_id): the join pushes the batch's start_time range into the scan of `spans`,
-- and zone maps skip every row group outside it. No index, so the cost does not grow with the table.
SELECT count(*) AS stored FROM spans s SEMI JOIN incoming_spans b USING (start_time, trace_id, span_id);
