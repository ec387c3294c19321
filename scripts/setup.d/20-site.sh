# shellcheck shell=bash
# The report site's test extras (after 10-python.sh made .venv): Debian chromium for the
# real-browser test (never `playwright install`: browser downloads fail here), the playwright
# driver, and zensical (the successor of Material for MkDocs; a test builds the site with it).
if [ "${BENCHCAT_SETUP_FOR:-test}" = "test" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else
      echo "setup: chromium is missing and this is not root: the browser test will skip" >&2
    fi
  fi
  if ! .venv/bin/python -c "import playwright, zensical" 2>/dev/null; then
    .venv/bin/python -m pip install -q playwright zensical
  fi
fi
