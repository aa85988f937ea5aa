"""UBI events and the event store (issue 31)."""
