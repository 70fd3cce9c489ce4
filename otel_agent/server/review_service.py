"""The ReviewService of review.proto: authentication for the ``review`` role, a bounded pool of its own, and the
protobuf messages; what a review is and how it is written is the read layer's (``read.reviews.Reviews``)."""

from __future__ import annotations

from typing import Any

from otel_agent.read.reviews import Reviews


class ReviewService:
    """The ReviewService of review.proto over the receiver's writer, independent of transport.

    Calls run on a small bounded pool of their own (``submit_*``), like queries: a review's lookup reads the
    derived views, and must not hold a thread that ingestion needs."""

    def __init__(self, writer: Any, auth: Any, workers: int = 2) -> None:
        from otel_agent.server.api import BoundedPool

        self.reviews = Reviews(writer)
        self.auth = auth
        self.pool = BoundedPool("review", workers, waiting=workers * 4)

    def submit_review(self, request: Any, authorization: str | None, encode: Any = lambda m: m) -> Any:
        """Authenticate for ``review``, then run ``review`` on the review pool."""
        self.auth.authenticate(authorization, "review")
        return self.pool.submit(lambda: encode(self.review(request, authorization)))

    def submit_writer_trust(self, request: Any, authorization: str | None, encode: Any = lambda m: m) -> Any:
        """Authenticate for ``review``, then run ``set_writer_trust`` on the review pool."""
        self.auth.authenticate(authorization, "review")
        return self.pool.submit(lambda: encode(self.set_writer_trust(request, authorization)))

    def close(self) -> None:
        """Stop the review pool."""
        self.pool.shutdown()

    def review(self, request: Any, authorization: str | None) -> Any:
        """The API's ``Review`` call: append a review as the authenticated principal."""
        from otel_agent.api.v1 import review_pb2

        who = self.auth.authenticate(authorization, "review")
        record = self.reviews.submit(
            request.target_kind, request.target_id, request.decision, request.reviewer, request.reason, who.name
        )
        fields = record.as_dict()
        fields["reason"] = fields["reason"] or ""
        fields["principal"] = fields["principal"] or ""
        return review_pb2.ReviewResponse(**fields)

    def set_writer_trust(self, request: Any, authorization: str | None) -> Any:
        """The API's ``SetWriterTrust`` call: append a grant or revocation through the writer."""
        from otel_agent.api.v1 import review_pb2

        self.auth.authenticate(authorization, "review")
        change = self.reviews.set_trust(
            request.principal, request.service_name, request.trusted, request.changed_by, request.reason
        )
        return review_pb2.WriterTrustResponse(change_id=change.change_id, changed_at=change.changed_at)
