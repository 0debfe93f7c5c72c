"""Each session's context: assembled under the model's window, compacted, recovered from
overflow, and recorded (docs/context.md; seed 001)."""
