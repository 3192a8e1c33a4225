#!/usr/bin/env bash
# A single-node Slurm cluster (slurmctld + slurmd + munge) on localhost, for CI and tests/slurm.
# Debian 12 (Slurm 22.05), run as root, no systemd, no usable cgroups. Idempotent and fast: does
# nothing when the node already answers, installs only what is missing, writes the config only once.
#   .ci/slurm-up.sh        install if needed, start, wait until the node is idle
#   .ci/slurm-up.sh stop   stop the daemons (scontrol shutdown) and munged
set -euo pipefail

CONF=/etc/slurm/slurm.conf
LOGS=/var/log/slurm
NODE=$(hostname -s)
# The config's first line; a config without it (an older one of this script's) is written again.
MARK="# runningtab single-node Slurm for CI (written by .ci/slurm-up.sh), v2"

node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1 | tr -d '*~#' || true; }

if [[ "${1:-}" == stop ]]; then
    scontrol shutdown >/dev/null 2>&1 || true
    [[ -s /run/munge/munged.pid ]] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    exit 0
fi

if [[ "$(node_state)" =~ ^(idle|mixed|allocated)$ ]] && grep -qxF "$MARK" "$CONF" 2>/dev/null; then
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; }
fi

if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 0755 /run/munge
if ! pgrep -u munge -x munged >/dev/null; then
    runuser -u munge -- /usr/sbin/munged
fi

written=
if ! grep -qxF "$MARK" "$CONF" 2>/dev/null; then
    written=1
    # The node line as slurmd sees this machine, with less memory than it has (slurmd refuses
    # a node that reports less RealMemory than configured).
    read -r NODELINE < <(slurmd -C | head -n1)
    MEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODELINE")
    NODELINE=$(sed "s/RealMemory=[0-9]*/RealMemory=$((MEM * 8 / 10))/" <<<"$NODELINE")
    install -d /etc/slurm
    cat >"$CONF" <<EOF
$MARK
ClusterName=runningtab
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
# cgroups are not usable here: with proctrack/cgroup jobs silently do nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# Share the node between jobs by cores and memory (otherwise one job takes the whole node).
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
# Impossible requests are refused at submit time instead of pending forever.
EnforcePartLimits=ALL
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
MailProg=/bin/true
ReturnToService=2
KillWait=10
# \`sbatch --wait\` polls a job's state after 2, 8, then every 32 s unless MinJobAge is under 6 s
# (it keeps 2 s then, so as not to miss a job purged at MinJobAge): a 20 s sweep waited 42 s.
MinJobAge=5
$NODELINE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
fi
install -d /var/spool/slurmctld /var/spool/slurmd "$LOGS"
if [[ -n $written ]] && scontrol ping 2>/dev/null | grep -q 'is UP'; then
    scontrol reconfigure   # running daemons read the new config
fi

if ! scontrol ping 2>/dev/null | grep -q 'is UP'; then
    setsid slurmctld -D >>"$LOGS/slurmctld.stdout" 2>&1 </dev/null &
fi
if ! pgrep -x slurmd >/dev/null; then
    setsid slurmd -D >>"$LOGS/slurmd.stdout" 2>&1 </dev/null &
fi

for _ in $(seq 1 150); do
    state=$(node_state)
    case "$state" in
        idle | mixed | allocated) exit 0 ;;
        down | drained | draining | fail) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.2
done
echo "slurm-up: node $NODE not idle after 30 s (state '${state:-?}'); see $LOGS/slurmctld.log and $LOGS/slurmd.log" >&2
exit 1
