package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

class SluiceShuffleManagerTest {
  private static SparkConf misspelled() {
    return new SparkConf(false)
        .set("spark.sluice.servers", "a.example:9099")
        .set("spark.sluice.push.bufersize", "64k")
        .set("spark.sluice.auth.clusterSecert", "hunter2-the-secret");
  }

  @Test
  void theDriverWarnsOfMisspelledKeysByNameWithTheKeyItMeantAndWithoutTheirValues() {
    List<String> warnings = new ArrayList<>();

    new SluiceShuffleManager(misspelled(), true, warnings::add).stop();

    assertThat(warnings)
        .containsExactly(
            "Spark configuration: unknown configuration key spark.sluice.auth.clusterSecert"
                + " (ignored); did you mean spark.sluice.auth.clusterSecret?",
            "Spark configuration: unknown configuration key spark.sluice.push.bufersize"
                + " (ignored); did you mean spark.sluice.push.bufferSize?");
    assertThat(String.join("\n", warnings)).doesNotContain("hunter2", "64k");
  }

  @Test
  void executorsLeaveTheWarningsToTheDriver() {
    List<String> warnings = new ArrayList<>();

    new SluiceShuffleManager(misspelled(), false, warnings::add).stop();

    assertThat(warnings).isEmpty();
  }
}
