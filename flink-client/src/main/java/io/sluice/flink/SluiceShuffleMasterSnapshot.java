package io.sluice.flink;

import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;

/**
 * The Sluice shuffle master's state for JobManager failover: per job, what {@link JobShuffle}
 * tracks (shuffle ids, placed partitions and their servers, the attempt epoch). Flink stores it
 * with its job events and hands it to the next JobManager's shuffle master. Each is whole, never
 * incremental.
 */
final class SluiceShuffleMasterSnapshot implements ShuffleMasterSnapshot {
  private static final long serialVersionUID = 1L;

  private final Map<JobID, JobShuffle.State> jobs;

  SluiceShuffleMasterSnapshot(Map<JobID, JobShuffle.State> jobs) {
    this.jobs = Map.copyOf(jobs);
  }

  Map<JobID, JobShuffle.State> jobs() {
    return jobs;
  }

  @Override
  public boolean isIncremental() {
    return false;
  }
}
