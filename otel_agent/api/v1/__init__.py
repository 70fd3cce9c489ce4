"""Generated code for the receiver's own API (source: proto/). Regenerate with scripts/gen_proto.py."""
