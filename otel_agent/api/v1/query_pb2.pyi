from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResultFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESULT_FORMAT_ROWS: _ClassVar[ResultFormat]
    RESULT_FORMAT_ARROW_IPC: _ClassVar[ResultFormat]

class Truncation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRUNCATION_NONE: _ClassVar[Truncation]
    TRUNCATION_ROWS: _ClassVar[Truncation]
    TRUNCATION_BYTES: _ClassVar[Truncation]
RESULT_FORMAT_ROWS: ResultFormat
RESULT_FORMAT_ARROW_IPC: ResultFormat
TRUNCATION_NONE: Truncation
TRUNCATION_ROWS: Truncation
TRUNCATION_BYTES: Truncation

class QueryRequest(_message.Message):
    __slots__ = ("sql", "params", "max_rows", "timeout_ms", "format", "max_bytes")
    SQL_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    MAX_ROWS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    sql: str
    params: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Value]
    max_rows: int
    timeout_ms: int
    format: ResultFormat
    max_bytes: int
    def __init__(self, sql: _Optional[str] = ..., params: _Optional[_Iterable[_Union[_struct_pb2.Value, _Mapping]]] = ..., max_rows: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., format: _Optional[_Union[ResultFormat, str]] = ..., max_bytes: _Optional[int] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("name", "type")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Value]
    def __init__(self, values: _Optional[_Iterable[_Union[_struct_pb2.Value, _Mapping]]] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ("columns", "rows", "truncated", "truncated_by", "truncated_reason", "arrow_ipc")
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_BY_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_REASON_FIELD_NUMBER: _ClassVar[int]
    ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    columns: _containers.RepeatedCompositeFieldContainer[Column]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    truncated: bool
    truncated_by: Truncation
    truncated_reason: str
    arrow_ipc: bytes
    def __init__(self, columns: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., truncated: _Optional[bool] = ..., truncated_by: _Optional[_Union[Truncation, str]] = ..., truncated_reason: _Optional[str] = ..., arrow_ipc: _Optional[bytes] = ...) -> None: ...
