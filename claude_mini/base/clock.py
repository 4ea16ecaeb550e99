"""The clock a part is given, so a test can set the time: seconds since the epoch, as `time.time` gives them.

Forgetting, consolidation (dream), the daily logs and `memory forget` take one as `clock: Clock = time.time`.
"""

from __future__ import annotations

from collections.abc import Callable

Clock = Callable[[], float]
