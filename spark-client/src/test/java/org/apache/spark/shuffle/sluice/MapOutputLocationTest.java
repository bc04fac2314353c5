package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.storage.ShuffleBlockId;
import org.junit.jupiter.api.Test;
import scala.Option;

class MapOutputLocationTest {
  @Test
  void locationNamesTheGenerationForEveryAttemptAndFetchFailure() {
    int gen = Integer.MAX_VALUE - 1;
    String host = MapOutputLocation.host(gen, "4", "10.0.0.7");
    BlockManagerId loc = MapOutputLocation.of(gen, host);
    assertThat(MapOutputLocation.generation(loc)).isEqualTo(gen);
    // two attempts of a map have one location, as on one executor with Spark's own shuffle
    assertThat(MapOutputLocation.of(gen, host)).isEqualTo(loc);
    // the attempt is the registered map id
    assertThat(MapOutputLocation.attempt(new ShuffleBlockId(3, 70_000, 2))).isEqualTo(70_000);
  }

  @Test
  void executorsNameNoHostButTheDriverInLocalModeNamesItsOwn() {
    // a host no executor has: losing a host loses no output
    assertThat(MapOutputLocation.host(5, "4", "10.0.0.7")).isEqualTo("sluice-gen-5");
    // local mode: the one host there is, so reduce tasks preferring it always get to run
    assertThat(MapOutputLocation.host(5, "driver", "laptop.local")).isEqualTo("laptop.local");
    BlockManagerId local = MapOutputLocation.of(5, MapOutputLocation.host(5, "driver", "h"));
    assertThat(local.host()).isEqualTo("h");
    assertThat(MapOutputLocation.generation(local)).isEqualTo(5);
  }

  @Test
  void theAttemptIsTheTaskAttemptIdKeptNonNegative() {
    // two task attempts (retries, speculative copies, other stage attempts) never share an attempt
    assertThat(MapOutputLocation.attemptOf(0)).isNotEqualTo(MapOutputLocation.attemptOf(1));
    assertThat(MapOutputLocation.attemptOf(1L << 40 | 5)).isEqualTo(5);
    assertThat(MapOutputLocation.attemptOf(Integer.MAX_VALUE + 1L)).isZero();
    assertThatThrownBy(() -> MapOutputLocation.attemptOf(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
  }

  @Test
  void outputNotWrittenBySluiceIsNamed() {
    BlockManagerId executor = BlockManagerId$.MODULE$.apply("3", "host-a", 7337, Option.empty());
    assertThatThrownBy(() -> MapOutputLocation.generation(executor))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("host-a")
        .hasMessageContaining("not written by Sluice");
  }
}
