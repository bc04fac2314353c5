package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.ShuffleBlockId;
import org.junit.jupiter.api.Test;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/** The reader's dedup rule: exactly the attempt Spark registered for each map counts. */
class MapOutputsByGenerationTest {
  private static Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> location(
      BlockManagerId loc, long taskId, int mapIndex, long... sizes) {
    List<Tuple3<BlockId, Object, Object>> blocks = new ArrayList<>();
    for (int reduce = 0; reduce < sizes.length; reduce++) {
      blocks.add(new Tuple3<>(new ShuffleBlockId(7, taskId, reduce), sizes[reduce], mapIndex));
    }
    return new Tuple2<>(loc, JavaConverters.asScalaBuffer(blocks).toSeq());
  }

  @Test
  void attemptsAreTheRegisteredMapIdsGroupedByGeneration() {
    int gen0 = 7;
    int gen1 = Integer.MAX_VALUE;
    List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> statuses =
        List.of(
            location(MapOutputLocation.of(gen0, "sluice-gen-7"), 100, 0, 10, 20),
            location(MapOutputLocation.of(gen0, "sluice-gen-7"), 101, 2, 5),
            // map 1 reran (a stage retry, task 205) into a new generation
            location(MapOutputLocation.of(gen1, "localhost"), 205, 1, 7, 8, 9));
    MapOutputsByGeneration outputs =
        new MapOutputsByGeneration(JavaConverters.asScalaIterator(statuses.iterator()), 4);

    List<MapOutputsByGeneration.Generation> gens = new ArrayList<>();
    outputs.generations().forEach(gens::add);
    assertThat(gens).extracting(g -> g.id).containsExactly(gen0, gen1);
    assertThat(gens.get(0).attempts).containsExactly(100, -1, 101, -1);
    assertThat(gens.get(0).blocks).isEqualTo(3);
    assertThat(gens.get(1).attempts).containsExactly(-1, 205, -1, -1);
    assertThat(gens.get(1).blocks).isEqualTo(3);
  }

  @Test
  void noStatusesNothingToRead() {
    MapOutputsByGeneration outputs =
        new MapOutputsByGeneration(
            JavaConverters.asScalaIterator(
                new ArrayList<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>>()
                    .iterator()),
            3);
    assertThat(outputs.isEmpty()).isTrue();
  }

  @Test
  void aBlockThatIsNotAShuffleBlockIsRefused() {
    BlockManagerId loc = MapOutputLocation.of(3, "sluice-gen-3");
    List<Tuple3<BlockId, Object, Object>> blocks = new ArrayList<>();
    blocks.add(new Tuple3<>(new RDDBlockId(1, 2), 4L, 0));
    Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> odd =
        new Tuple2<>(loc, JavaConverters.asScalaBuffer(blocks).toSeq());
    assertThatThrownBy(
            () ->
                new MapOutputsByGeneration(
                    JavaConverters.asScalaIterator(List.of(odd).iterator()), 1))
        .hasMessageContaining("rdd_1_2")
        .hasMessageContaining("is not a shuffle block");
  }
}
