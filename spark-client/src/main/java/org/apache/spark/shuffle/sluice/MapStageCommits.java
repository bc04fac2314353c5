package org.apache.spark.shuffle.sluice;

import io.sluice.client.coordinator.ShuffleCoordinator;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleStatus;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.runtime.AbstractFunction1;

/**
 * Starts the commit of a Sluice shuffle as soon as Spark's scheduler completes its map stage with
 * every map output registered, on the driver's listener bus, so that the servers close its splits
 * while the reduce stage is scheduled and its tasks start. Without it the first reducer to read
 * starts the commit and waits for all of it: on a join of two shuffles, two commits in a row on the
 * reduce stage's critical path.
 *
 * <p>The generations committed are the ones Spark's map output tracker counts for the shuffle, the
 * same ones its readers would ask for. A commit started here is the commit a reader would have
 * started: the scheduler, not a map's own report, has found the stage complete (see {@link
 * ShuffleCoordinator#commitWhenReadersAsk}). A stage that failed, was cancelled or left outputs
 * missing is left to its rerun and its readers.
 */
final class MapStageCommits extends SparkListener {
  private static final Logger LOG = LoggerFactory.getLogger(MapStageCommits.class);

  private final Supplier<ShuffleCoordinator> coordinator;
  private final Supplier<MapOutputTrackerMaster> tracker;
  private final IntPredicate onSluice;

  /**
   * @param coordinator the application's coordinator, or null when it is stopped
   * @param tracker the driver's map output tracker
   * @param onSluice whether a shuffle id is Sluice's (not fallen back to the built-in shuffle)
   */
  MapStageCommits(
      Supplier<ShuffleCoordinator> coordinator,
      Supplier<MapOutputTrackerMaster> tracker,
      IntPredicate onSluice) {
    this.coordinator = coordinator;
    this.tracker = tracker;
    this.onSluice = onSluice;
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted event) {
    StageInfo stage = event.stageInfo();
    Option<Object> shuffle = stage.shuffleDepId();
    if (stage.failureReason().isDefined() || shuffle.isEmpty()) {
      return;
    }
    ShuffleCoordinator c = coordinator.get();
    if (c == null) {
      return;
    }
    int shuffleId = (Integer) shuffle.get();
    if (!onSluice.test(shuffleId)) {
      return;
    }
    Set<Integer> generations = countedGenerations(shuffleId);
    for (int generation : generations) {
      if (c.commitIfRegistered(generation)) {
        LOG.debug(
            "Map stage {} of shuffle {} is complete; committing Sluice generation {}",
            stage.stageId(),
            shuffleId,
            generation);
      }
    }
  }

  /**
   * The generations holding the map outputs the tracker counts for the shuffle; none when it does
   * not know the shuffle or misses an output.
   */
  private Set<Integer> countedGenerations(int shuffleId) {
    Option<ShuffleStatus> status = tracker.get().shuffleStatuses().get(shuffleId);
    if (status.isEmpty()) {
      return Set.of();
    }
    return status
        .get()
        .withMapStatuses(
            new AbstractFunction1<MapStatus[], Set<Integer>>() {
              @Override
              public Set<Integer> apply(MapStatus[] statuses) {
                Set<Integer> generations = new TreeSet<>();
                for (MapStatus s : statuses) {
                  if (s == null) {
                    return Set.of();
                  }
                  generations.add(MapOutputLocation.generation(s.location()));
                }
                return generations;
              }
            });
  }
}
