"""The overnight opportunity scanner's asset graph and the pure logic under it (README, DESIGN.md).

Importing the package tunes one thing about the process, before polars is loaded: polars' allocator (jemalloc)
keeps the pages a night frees for about 1.5 s before it gives them back, and a wide night frees and allocates its
frames within that time, so its peak held every frame it had already dropped. Here they go back at once: a
10,718-entity night's peak 755 -> 694 MB (-8%), its time +6-10%, a 46-entity night's the same 323 MB and +4%
(`bench/breadth.py` runs the wide night both ways). A value the user set (`_RJEM_MALLOC_CONF`) is kept; polars'
own, which a parent process that loaded polars first hands down, is not the user's; once polars is loaded the
setting has no effect.
"""

import os

_POLARS_OWN = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What polars writes to `_RJEM_MALLOC_CONF` when it is loaded with none set (polars/__init__.py)."""

if set(os.environ.get("_RJEM_MALLOC_CONF", _POLARS_OWN).split(",")) <= set(_POLARS_OWN.split(",")):
    os.environ["_RJEM_MALLOC_CONF"] = "dirty_decay_ms:0,muzzy_decay_ms:0"
