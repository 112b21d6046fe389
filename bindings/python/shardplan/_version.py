"""The binding's release and the C ABI it was written against.

Read by the in-tree build backend (``_build_backend/shardplan_build.py``)
without importing the package, so keep these two assignments literal.
"""

__version__ = "0.9.0"

#: The ``SP_ABI_VERSION`` of ``shardplan/shardplan.h`` these bindings declare.
ABI_VERSION = 1
