-- memory_proposal: one proposal (the review form posts to its page).
SELECT * FROM memory_proposals WHERE proposal_id = $proposal_id
