# Environment of bin/shuffle-daemon and bin/sluice-ctl, sourced by both when present (a bash
# script: plain assignments). Every setting is commented out: the comment above it names its
# default, and the line shows an example value; uncomment a line to set it. A value set here
# wins over the same variable in the caller's environment.

# The Java 11+ runtime to use (default: java on the PATH).
# export JAVA_HOME=/usr/lib/jvm/java-17

# Maximum (and initial) heap of the daemon, -Xmx/-Xms. The heap holds metadata, indexes and
# read buffers' bookkeeping; pushed data lives in direct memory, not here.
# export SLUICE_HEAP=2g

# Direct memory limit, -XX:MaxDirectMemorySize. Pushed, not yet flushed data lives there.
# Default: derived from sluice.memory.max as the daemon reads it (conf/sluice.conf, --conf,
# --memory, --set): the budget plus an eighth of it (at least 64m) for Netty's buffers, plus
# 64m for the JDK's own; 4672m for --memory 4g. Set it only to give more; with less, the
# daemon refuses to start and names the size it needs.
# export SLUICE_DIRECT_MEMORY=4672m

# The GC log option. Default: all GC events to $SLUICE_LOG_DIR/gc.log, 5 files of 20 MB.
# Empty: no GC log.
# export SLUICE_GC_LOG="-Xlog:gc*:file=/var/log/sluice/gc.log:time,uptime,level,tags:filecount=5,filesize=20m"

# More JVM options of the daemon, appended last, so they win over the ones above. A heap dump
# is written to $SLUICE_LOG_DIR on OutOfMemoryError (-XX:+HeapDumpOnOutOfMemoryError);
# -XX:-HeapDumpOnOutOfMemoryError here turns that off, -XX:HeapDumpPath=DIR moves it.
# export SLUICE_JAVA_OPTS="-XX:+UseG1GC"

# Directory of the daemon's log (shuffle-daemon.log), its console output (shuffle-daemon.out),
# the GC log and heap dumps (default: logs/ of this installation).
# export SLUICE_LOG_DIR=/var/log/sluice

# Directory of the pid file and of shuffle-daemon.args, the options the running daemon was
# started with, which 'stop' and 'status' read (default: $SLUICE_LOG_DIR).
# export SLUICE_PID_DIR=/var/run/sluice

# Seconds 'shuffle-daemon stop' waits for the daemon to exit once its drain is over. Default:
# the daemon's sluice.shutdown.timeout (the longest its commit of the open splits may take; 60s
# unless set) plus 30, read from conf/ and the options it was started with, so raising
# sluice.shutdown.timeout raises the wait too. The drain ('stop --drain SECONDS', or
# sluice.shutdown.drainTimeout when longer) is added either way. Set this only to wait longer or
# shorter than that; a wait shorter than sluice.shutdown.timeout can report a failure while the
# server still commits.
# export SLUICE_STOP_TIMEOUT=90

# Seconds 'shuffle-daemon start' waits for the daemon to serve (default: 60).
# export SLUICE_START_WAIT=60

# Hadoop's jars, for the distributed storage tier (sluice.storage.policy=...,hdfs); Sluice
# does not bundle Hadoop. Default: the output of 'hadoop classpath' when hadoop is on the PATH.
# export HADOOP_CLASSPATH="$(hadoop classpath)"

# The admin token sluice-ctl sends with its actions (decommission, expire, ...); prefer its
# --token-file option.
# export SLUICE_ADMIN_TOKEN=...
