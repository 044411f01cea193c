"""The run store: every run, its spec, bound trajectory, models and metrics, in one DuckDB file.

Durability comes from two layers. While a run is live, its ``StoreSink`` appends every event to
a JSON-lines file beside the database (``<db>.events/<run_id>.jsonl``): that file is the run's
write-ahead log, and what other processes follow without touching DuckDB. A background thread
copies events into DuckDB in batches and refreshes the run's heartbeat, opening the database
only for the moment it writes, so several runs (and readers) share one file. When the run ends
and its last batch is in the database, the log is removed.

Whenever the store is opened it recovers: a log whose writer is gone (killed with SIGKILL,
machine crash, a database that stayed locked) is imported, so its run becomes ``failed`` with
every event it wrote, or ``finished`` if its final result reached the log.
"""

from __future__ import annotations

from glasswork.store.journal import StoreSink
from glasswork.store.recovery import Recovery
from glasswork.store.runs import RunRow, SweepRow
from glasswork.store.schema import (DB_ENV, DEFAULT_DB, EVENT_COLUMNS, FINAL_LOCK_TIMEOUT, FLUSH_SECONDS,
                                    HEARTBEAT_SECONDS, LOCK_TIMEOUT, MIGRATIONS, SCHEMA_VERSION, STALE_SECONDS,
                                    STATE_OF_STATUS, STATES, StoreDamaged, StoreError, StoreLocked,
                                    default_db_path)

__all__ = [
    "DB_ENV", "DEFAULT_DB", "EVENT_COLUMNS", "FINAL_LOCK_TIMEOUT", "FLUSH_SECONDS", "HEARTBEAT_SECONDS",
    "LOCK_TIMEOUT", "MIGRATIONS", "SCHEMA_VERSION", "STALE_SECONDS", "STATES", "STATE_OF_STATUS",
    "RunRow", "RunStore", "StoreDamaged", "StoreError", "StoreLocked", "StoreSink", "SweepRow", "default_db_path",
]


class RunStore(Recovery):
    """A DuckDB run-history file (``schema``), its runs (``runs``) and their recovery
    (``recovery``); a live run reaches it through ``StoreSink`` (``journal``)."""

    def open(self) -> RunStore:
        """Check the database is usable now (migrating and recovering it); raises ``StoreError``."""
        with self.connect() as con:
            self._recover(con)
        return self
