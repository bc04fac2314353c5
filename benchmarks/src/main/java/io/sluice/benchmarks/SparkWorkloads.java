package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The jobs of {@code shuffle-bench spark}. Each returns a signature of its result (counts and
 * checksums) that must be the same on both shuffles, and optionally notes about its plan.
 */
final class SparkWorkloads {
  private SparkWorkloads() {}

  /** What a run produced: the result's signature and what the plan showed. */
  static final class Outcome {
    final String signature;
    final String note;

    Outcome(String signature, String note) {
      this.signature = signature;
      this.note = note;
    }
  }

  /** A workload: its name, a description, and the job. */
  interface Workload {
    String name();

    String describe();

    Outcome run(SparkSession spark);
  }

  private static List<Integer> range(int n) {
    return IntStream.range(0, n).boxed().collect(Collectors.toList());
  }

  /**
   * {@code parallelize(0 until maps, maps).flatMap(records of payload bytes).repartition(R).count}:
   * a plain all-to-all shuffle of incompressible 100-byte records.
   */
  static Workload repartition(int maps, int recordsPerMap, int reducers) {
    return new Workload() {
      @Override
      public String name() {
        return "repartition";
      }

      @Override
      public String describe() {
        return maps + " maps x " + recordsPerMap + " records of 100 bytes -> " + reducers;
      }

      @Override
      public Outcome run(SparkSession spark) {
        long count =
            JavaSparkContext.fromSparkContext(spark.sparkContext())
                .parallelize(range(maps), maps)
                .flatMap(m -> new Payloads(m, recordsPerMap, 100))
                .repartition(reducers)
                .count();
        return new Outcome("count=" + count, "");
      }
    };
  }

  /** Many maps times many reducers with a few records per block: many tiny blocks. */
  static Workload smallBlocks(int maps, int reducers, int recordsPerMap) {
    return new Workload() {
      @Override
      public String name() {
        return "small-blocks";
      }

      @Override
      public String describe() {
        return maps + " maps x " + reducers + " reducers, " + recordsPerMap + " records per map";
      }

      @Override
      public Outcome run(SparkSession spark) {
        List<Tuple2<Integer, Long>> sums =
            JavaSparkContext.fromSparkContext(spark.sparkContext())
                .parallelize(range(maps), maps)
                .flatMapToPair(
                    m -> {
                      List<Tuple2<Integer, Long>> out = new ArrayList<>(recordsPerMap);
                      for (int j = 0; j < recordsPerMap; j++) {
                        out.add(new Tuple2<>(j, (long) m * recordsPerMap + j));
                      }
                      return out.iterator();
                    })
                .partitionBy(new HashPartitioner(reducers))
                .mapPartitions(
                    it -> {
                      long n = 0;
                      long sum = 0;
                      while (it.hasNext()) {
                        Tuple2<Integer, Long> t = it.next();
                        n++;
                        sum += t._2() * 31 + t._1();
                      }
                      List<Tuple2<Integer, Long>> r = new ArrayList<>();
                      r.add(new Tuple2<>((int) n, sum));
                      return r.iterator();
                    })
                .collect();
        long n = 0;
        long sum = 0;
        for (Tuple2<Integer, Long> t : sums) {
          n += t._1();
          sum += t._2();
        }
        return new Outcome("records=" + n + " checksum=" + sum, "");
      }
    };
  }

  /**
   * Interactive SQL's shape: {@code shuffles} jobs one after another, each shuffling a few MiB of
   * incompressible 100-byte records from {@code maps} maps to {@code reducers} partitions (Spark
   * SQL's default 200), so each split holds a few KiB and the per-shuffle and per-split costs
   * (registration, files, commit, opening streams) dominate, not the bytes.
   */
  static Workload smallShuffles(int shuffles, int maps, int recordsPerMap, int reducers) {
    return new Workload() {
      @Override
      public String name() {
        return "small-shuffles";
      }

      @Override
      public String describe() {
        return shuffles
            + " shuffles of "
            + maps
            + " maps x "
            + recordsPerMap
            + " records of 100 bytes -> "
            + reducers;
      }

      @Override
      public Outcome run(SparkSession spark) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        long total = 0;
        for (int i = 0; i < shuffles; i++) {
          int first = i * maps;
          total +=
              jsc.parallelize(range(maps), maps)
                  .flatMap(m -> new Payloads(first + m, recordsPerMap, 100))
                  .repartition(reducers)
                  .count();
        }
        return new Outcome("count=" + total, "");
      }
    };
  }

  /**
   * An AQE sort-merge join whose left side has one hot key holding {@code hotPercent} of its rows,
   * with incompressible payloads; AQE splits the hot partition into map ranges.
   */
  static Workload skewJoin(long leftRows, long rightRows, int hotPercent) {
    return new Workload() {
      @Override
      public String name() {
        return "skew-join";
      }

      @Override
      public String describe() {
        return leftRows + " x " + rightRows + " rows, key 0 holds " + hotPercent + "% of the left";
      }

      @Override
      public Outcome run(SparkSession spark) {
        spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
        spark.conf().set("spark.sql.adaptive.enabled", "true");
        spark.conf().set("spark.sql.adaptive.skewJoin.enabled", "true");
        spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "16m");
        spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "16m");
        Dataset<Row> left =
            spark
                .range(0, leftRows, 1, 8)
                .selectExpr(
                    "CASE WHEN id % 100 < " + hotPercent + " THEN 0 ELSE id END AS k",
                    "sha2(CAST(id AS STRING), 256) AS lv");
        Dataset<Row> right =
            spark
                .range(0, rightRows, 1, 4)
                .selectExpr("id AS k", "sha2(CAST(id * 7 AS STRING), 256) AS rv");
        Dataset<Row> result =
            left.join(right, "k").selectExpr("count(*) AS n", "sum(hash(lv, rv)) AS h");
        Row row = result.collectAsList().get(0);
        String plan = result.queryExecution().executedPlan().toString();
        return new Outcome(
            "rows=" + row.getLong(0) + " checksum=" + row.get(1),
            plan.contains("skew=true") ? "skew split" : "no skew split");
      }
    };
  }

  /**
   * A join planned as sort-merge (statically both sides look large) whose small side turns out to
   * hold a few rows: AQE turns it into a broadcast join and reads the big side's shuffle with the
   * local shuffle reader, one map's share of every partition per task (map-range reads).
   */
  static Workload localReader(long rows, int maps) {
    return new Workload() {
      @Override
      public String name() {
        return "local-reader";
      }

      @Override
      public String describe() {
        return rows + " rows from " + maps + " maps joined with about 50 rows, read per mapper";
      }

      @Override
      public Outcome run(SparkSession spark) {
        spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "4k");
        spark.conf().set("spark.sql.adaptive.enabled", "true");
        spark.conf().set("spark.sql.adaptive.localShuffleReader.enabled", "true");
        // few enough partitions that most of the small side's are non-empty, or AQE keeps the
        // sort-merge join (spark.sql.adaptive.nonEmptyPartitionRatioForBroadcastJoin)
        spark.conf().set("spark.sql.shuffle.partitions", "16");
        Dataset<Row> big =
            spark
                .range(0, rows, 1, maps)
                .selectExpr("id % 1000 AS k", "sha2(CAST(id AS STRING), 256) AS v");
        // a non-deterministic filter: the optimizer cannot carry it over to the big side
        Dataset<Row> small =
            spark
                .range(0, 1000, 1, 2)
                .filter("rand(7) < 0.05")
                .selectExpr("id AS k", "concat('s', id) AS s");
        Dataset<Row> result =
            big.join(small, "k").selectExpr("count(*) AS n", "sum(hash(v, s)) AS h");
        Row row = result.collectAsList().get(0);
        String plan = result.queryExecution().executedPlan().toString();
        return new Outcome(
            "rows=" + row.getLong(0) + " checksum=" + row.get(1),
            plan.contains("AQEShuffleRead local") ? "local reader" : "no local reader");
      }
    };
  }

  /** Pseudo-random, incompressible records of a fixed size, different for every map. */
  static final class Payloads implements Iterator<byte[]>, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final int size;
    private int left;
    private long x;

    Payloads(int map, int count, int size) {
      this.size = size;
      this.left = count;
      this.x = 0x9E3779B97F4A7C15L * (map + 1);
    }

    @Override
    public boolean hasNext() {
      return left > 0;
    }

    @Override
    public byte[] next() {
      left--;
      byte[] b = new byte[size];
      for (int i = 0; i < size; i += 8) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        for (int j = 0; j < 8 && i + j < size; j++) {
          b[i + j] = (byte) (x >>> (8 * j));
        }
      }
      return b;
    }
  }
}
