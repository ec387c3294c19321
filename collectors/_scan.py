"""Fast whole-text scanning for line-anchored patterns (not a collector).

Python's ``re`` searches quickly only for a pattern that starts with a literal; ``^`` under
``re.M`` (or a look-behind) is tried at every position and runs 10-20x slower. So a
line-anchored pattern starts with a newline and is run over ``"\\n" + text``: ``m.start()``
(the newline) is then exactly the offset in ``text`` of the matched line's first character.
"""

from __future__ import annotations

import re

# End of a line without consuming its newline (the next line's match starts with it).
EOL = r"[ \t\r]*(?=\n|\Z)"


def at_line_start(body: str, flags: int = 0) -> re.Pattern:
    """``body`` matched only at the start of a line, when run over :func:`padded` text."""
    return re.compile(r"\n" + body, flags)


def padded(text: str) -> str:
    return "\n" + text
