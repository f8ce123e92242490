"""Scheduling: jobs built on the GUI thread, lanes that keep only the newest job of a stream,
the driver that runs every view model on a lane of its own, one bounded worker pool every lane
shares, its decoded-chunk cache, and reading ahead. No Qt here: the app hands each driver a
``post`` that queues answers to the GUI thread."""

from .answer import Answer
from .driver import Driver, ReadOnce, ReadsAhead, Request, TakesParts, ViewModel
from .job import Context, Job, Progress, call_job, read_job
from .lane import Lane, Post, call_now
from .pool import DEFAULT_THREADS, PoolClosed, WorkerPool
from .prefetch import Prefetch, Warm
from .tasks import Done, Task, Tasks
from .tally import LaneCount, Tally

__all__ = ["Answer", "Context", "DEFAULT_THREADS", "Done", "Driver", "Job", "Lane", "LaneCount", "PoolClosed", "Post", "Prefetch",
           "Progress", "ReadOnce", "ReadsAhead", "Request", "Tally", "TakesParts", "Task", "Tasks", "ViewModel", "Warm", "WorkerPool", "call_job", "call_now", "read_job"]
