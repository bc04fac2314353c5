package io.sluice.spark.suites;

import java.util.Map;
import org.apache.spark.ShuffleSuite;

/**
 * Spark's abstract {@code ShuffleSuite} made concrete for Sluice, as Spark's {@code
 * SortShuffleSuite} makes it concrete for the built-in sort shuffle: the suite's configuration
 * ({@code new SparkConf(loadDefaults = false)}, so system properties do not reach it) gets the
 * shuffle manager and servers that {@link SparkOwnSuites} set as system properties. Its tests run
 * in {@code local} and {@code local-cluster[2,1,1024]} mode, as Spark wrote them.
 */
public class SluiceShuffleSuite extends ShuffleSuite {
  @Override
  public void beforeAll() {
    super.beforeAll();
    for (Map.Entry<String, String> e : SparkOwnSuites.sparkSettings().entrySet()) {
      conf().set(e.getKey(), e.getValue());
    }
  }
}
