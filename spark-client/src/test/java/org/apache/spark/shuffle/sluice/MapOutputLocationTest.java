package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.junit.jupiter.api.Test;
import scala.Option;

class MapOutputLocationTest {
  @Test
  void locationCarriesGenerationAndAttempt() {
    int attempt = MapOutputLocation.encodeAttempt(2, 3);
    BlockManagerId loc = MapOutputLocation.of(Integer.MAX_VALUE - 1, attempt);
    assertThat(MapOutputLocation.generation(loc)).isEqualTo(Integer.MAX_VALUE - 1);
    assertThat(MapOutputLocation.attempt(loc)).isEqualTo((2 << 16) | 3);
    // a fetch failure names the generation: same executor and host as every output in it
    BlockManagerId generation = MapOutputLocation.ofGeneration(Integer.MAX_VALUE - 1);
    assertThat(generation.executorId()).isEqualTo(loc.executorId());
    assertThat(generation.host()).isEqualTo(loc.host());
  }

  @Test
  void attemptsOfDifferentStageAttemptsDiffer() {
    assertThat(MapOutputLocation.encodeAttempt(0, 1))
        .isNotEqualTo(MapOutputLocation.encodeAttempt(1, 1));
    assertThatThrownBy(() -> MapOutputLocation.encodeAttempt(0, 1 << 16))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MapOutputLocation.encodeAttempt(1 << 15, 0))
        .isInstanceOf(IllegalArgumentException.class);
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
