# A real Slurm for the tests (tests/test_slurm.py): Debian's slurm-wlm (slurmctld + slurmd) and munge.
# Test setup only, as root, and only when missing; scripts/slurm-local configures and starts them.
if [ "${BENCHCAT_SETUP_FOR:-test}" = test ] && ! command -v slurmctld >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    slurm_start=$(date +%s)
    # policy-rc.d: the packages must not start their daemons; the test cluster starts its own.
    own_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
    if [ "$own_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
    echo "slurm-wlm + munge installed in $(( $(date +%s) - slurm_start )) s" >&2
  else
    echo "40-slurm: slurm-wlm is missing and this is not root with apt-get; the Slurm test will skip" >&2
  fi
fi
