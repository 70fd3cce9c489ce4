from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ReviewRequest(_message.Message):
    __slots__ = ("target_kind", "target_id", "decision", "reviewer", "reason")
    TARGET_KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    target_kind: str
    target_id: str
    decision: str
    reviewer: str
    reason: str
    def __init__(self, target_kind: _Optional[str] = ..., target_id: _Optional[str] = ..., decision: _Optional[str] = ..., reviewer: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ReviewResponse(_message.Message):
    __slots__ = ("review_id", "target_kind", "target_id", "decision", "reviewer", "reason", "reviewed_at", "principal", "target_snapshot_json")
    REVIEW_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    TARGET_SNAPSHOT_JSON_FIELD_NUMBER: _ClassVar[int]
    review_id: str
    target_kind: str
    target_id: str
    decision: str
    reviewer: str
    reason: str
    reviewed_at: str
    principal: str
    target_snapshot_json: str
    def __init__(self, review_id: _Optional[str] = ..., target_kind: _Optional[str] = ..., target_id: _Optional[str] = ..., decision: _Optional[str] = ..., reviewer: _Optional[str] = ..., reason: _Optional[str] = ..., reviewed_at: _Optional[str] = ..., principal: _Optional[str] = ..., target_snapshot_json: _Optional[str] = ...) -> None: ...

class WriterTrustRequest(_message.Message):
    __slots__ = ("principal", "service_name", "trusted", "changed_by", "reason")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SERVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    TRUSTED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    principal: str
    service_name: str
    trusted: bool
    changed_by: str
    reason: str
    def __init__(self, principal: _Optional[str] = ..., service_name: _Optional[str] = ..., trusted: _Optional[bool] = ..., changed_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class WriterTrustResponse(_message.Message):
    __slots__ = ("change_id", "changed_at")
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    change_id: str
    changed_at: str
    def __init__(self, change_id: _Optional[str] = ..., changed_at: _Optional[str] = ...) -> None: ...
