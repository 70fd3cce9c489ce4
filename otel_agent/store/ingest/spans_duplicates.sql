-- How many of the batch's spans are already stored (usually 0; repeats within the batch are counted by the
-- writer with pyarrow).
-- A re-delivered span is identical, end_time included, so stored duplicates are found with a semi join on
-- (end_time, trace_id, span_id). The join pushes the batch's end_time range into the scan of `spans`, and
-- zone maps skip every row group outside it. end_time, not start_time: a span is exported when it ends,
-- so end times follow arrival and each row group covers a narrow range of them, while a long-running span
-- (a flow run of an hour) has a start time far behind everything that arrives with it.
-- No index is kept: the cost does not grow with the table (bench/dedupe.py).
SELECT count(*) AS stored FROM spans s SEMI JOIN incoming_spans b USING (end_time, trace_id, span_id);
