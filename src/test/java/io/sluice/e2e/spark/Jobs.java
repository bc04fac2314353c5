package io.sluice.e2e.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.TaskCompletionListener;
import scala.Tuple2;
import scala.collection.JavaConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * The jobs every suite runs on the built-in shuffle and on Sluice. Each returns its result as
 * strings in a canonical order (sorted, unless the job's own order is what it tests), so results
 * compare with {@code equals} and differences print readably. Tiny data, few partitions: they test
 * behaviour, not speed.
 */
final class Jobs {
  private Jobs() {}

  static JavaSparkContext jsc(SparkSession spark) {
    return JavaSparkContext.fromSparkContext(spark.sparkContext());
  }

  static List<Integer> range(int n) {
    return IntStream.range(0, n).boxed().collect(Collectors.toList());
  }

  static List<String> sorted(List<String> rows) {
    List<String> copy = new ArrayList<>(rows);
    Collections.sort(copy);
    return copy;
  }

  static List<String> strings(List<?> rows) {
    return rows.stream().map(String::valueOf).collect(Collectors.toList());
  }

  static List<String> reduceByKey(SparkSession spark) {
    JavaPairRDD<Integer, Long> counts =
        jsc(spark)
            .parallelize(range(20_000), 4)
            .mapToPair(i -> new Tuple2<>(i % 97, (long) i))
            .reduceByKey(Long::sum, 5);
    return sorted(strings(counts.collect()));
  }

  static List<String> groupByKey(SparkSession spark) {
    JavaPairRDD<Integer, Iterable<Integer>> groups =
        jsc(spark)
            .parallelize(range(6_000), 3)
            .mapToPair(i -> new Tuple2<>(i % 50, i))
            .groupByKey(4);
    return sorted(
        strings(
            groups
                .mapValues(
                    vs -> {
                      List<Integer> l = new ArrayList<>();
                      vs.forEach(l::add);
                      Collections.sort(l);
                      return l.toString();
                    })
                .collect()));
  }

  /** The order of the result is what this job tests. */
  static List<String> sortByKey(SparkSession spark) {
    return strings(
        jsc(spark)
            .parallelize(range(8_000), 4)
            .mapToPair(i -> new Tuple2<>((i * 7919) % 8_009, i))
            .sortByKey(true, 5)
            .collect());
  }

  static List<String> join(SparkSession spark) {
    JavaSparkContext sc = jsc(spark);
    JavaPairRDD<Integer, Integer> left =
        sc.parallelize(range(3_000), 3).mapToPair(i -> new Tuple2<>(i % 100, i));
    JavaPairRDD<Integer, String> right =
        sc.parallelize(range(1_000), 2).mapToPair(i -> new Tuple2<>(i % 150, "v" + i));
    return sorted(strings(left.join(right, 6).collect()));
  }

  /** Which partition each record lands in must match too (round robin from a seeded start). */
  static List<String> repartition(SparkSession spark) {
    JavaRDD<String> tagged =
        jsc(spark)
            .parallelize(range(10_000), 3)
            .repartition(7)
            .mapPartitionsWithIndex(
                (index, it) -> {
                  List<String> out = new ArrayList<>();
                  it.forEachRemaining(v -> out.add(index + ":" + v));
                  return out.iterator();
                },
                true);
    return sorted(tagged.collect());
  }

  /**
   * Injected failures: attempt 0 of every even map fails halfway through its output (after some
   * batches were pushed); attempt 0 of every map divisible by 3 fails after its whole output was
   * pushed and reported (a completion listener throws), so two complete attempts exist and only the
   * one Spark registered may count; attempt 0 of reduce partition 1 fails after reading.
   */
  static List<String> withTaskFailures(SparkSession spark) {
    JavaPairRDD<Integer, Long> sums =
        jsc(spark)
            .parallelize(range(40_000), 6)
            .mapPartitions(
                it -> {
                  TaskContext task = TaskContext.get();
                  List<Integer> all = new ArrayList<>();
                  it.forEachRemaining(all::add);
                  boolean firstAttempt = task.attemptNumber() == 0;
                  if (firstAttempt && task.partitionId() % 3 == 0) {
                    task.addTaskCompletionListener(
                        (TaskCompletionListener)
                            ctx -> {
                              throw new IllegalStateException("injected failure after the map");
                            });
                  }
                  if (firstAttempt && task.partitionId() % 2 == 0) {
                    List<Integer> half = new ArrayList<>(all.subList(0, all.size() / 2));
                    return new FailingIterator<>(half.iterator());
                  }
                  return all.iterator();
                })
            .mapToPair(i -> new Tuple2<>(i % 113, (long) i))
            .reduceByKey(Long::sum, 4)
            .mapPartitionsWithIndex(
                (index, it) -> {
                  List<Tuple2<Integer, Long>> out = new ArrayList<>();
                  it.forEachRemaining(out::add);
                  if (index == 1 && TaskContext.get().attemptNumber() == 0) {
                    throw new IllegalStateException("injected failure after the reduce read");
                  }
                  return out.iterator();
                },
                true)
            .mapToPair(t -> t);
    return sorted(strings(sums.collect()));
  }

  /** Yields its elements, then fails instead of ending. */
  static final class FailingIterator<T> implements java.util.Iterator<T>, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final java.util.Iterator<T> delegate;

    FailingIterator(java.util.Iterator<T> delegate) {
      this.delegate = delegate;
    }

    @Override
    public boolean hasNext() {
      if (!delegate.hasNext()) {
        throw new IllegalStateException("injected failure halfway through the map output");
      }
      return true;
    }

    @Override
    public T next() {
      return delegate.next();
    }
  }

  static Dataset<Row> people(SparkSession spark) {
    return spark
        .range(0, 5_000, 1, 4)
        .selectExpr("id", "id % 37 AS dept", "CAST(id * 13 % 1000 AS DOUBLE) AS salary");
  }

  static List<String> dataFrameAggregateAndJoin(SparkSession spark) {
    Dataset<Row> people = people(spark);
    Dataset<Row> depts =
        spark.range(0, 37, 1, 2).selectExpr("id AS dept", "concat('dept-', id) AS name");
    Dataset<Row> stats =
        people
            .groupBy("dept")
            .agg(
                org.apache.spark.sql.functions.count("id").as("n"),
                org.apache.spark.sql.functions.sum("salary").as("total"));
    return sorted(strings(stats.join(depts, "dept").collectAsList()));
  }

  /**
   * A barrier map stage whose first attempt fails after every task passed the barrier: Spark drops
   * the attempt's map outputs and reruns every task, so only the second attempt's data may count.
   * The first attempt writes other numbers than the second (their negation), so a read of any of
   * its output changes the result; task 0 fails halfway through its output (after some batches were
   * pushed), every other task after its whole output was pushed and reported.
   *
   * <p>Every task of the failed attempt fails, none succeeds: Spark 3.5's DAGScheduler registers
   * the map output of a task of a failed barrier attempt that succeeds after the failure was
   * handled (SPARK-59094), so the rerun is a barrier task set of the missing partitions only, and
   * its {@code barrier()} waits for all the stage's partitions, that is forever. With one task
   * failing and the other succeeding, the job hung that way about once in five runs, on the
   * built-in shuffle too.
   */
  static List<String> barrierStageRetry(SparkSession spark) {
    RDD<Integer> input = jsc(spark).parallelize(range(10_000), 2).rdd();
    RDD<Integer> barriered =
        input.barrier().mapPartitions(new FailFirstBarrierAttempt(), false, INTEGER);
    JavaPairRDD<Integer, Long> sums =
        JavaRDD.fromRDD(barriered, INTEGER)
            .mapToPair(i -> new Tuple2<>(Math.floorMod(i, 71), (long) i))
            .reduceByKey(Long::sum, 3);
    return sorted(strings(sums.collect()));
  }

  static final ClassTag<Integer> INTEGER = ClassTag$.MODULE$.apply(Integer.class);

  /**
   * The barrier stage's tasks: all meet at the barrier; in stage attempt 0 every task then fails,
   * task 0 halfway through its output, the others after their whole output (a completion listener
   * throws), and the numbers they write are negated.
   */
  private static final class FailFirstBarrierAttempt
      extends AbstractFunction1<
          scala.collection.Iterator<Integer>, scala.collection.Iterator<Integer>>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public scala.collection.Iterator<Integer> apply(scala.collection.Iterator<Integer> it) {
      BarrierTaskContext task = BarrierTaskContext.get();
      List<Integer> all = new ArrayList<>();
      JavaConverters.asJavaIterator(it).forEachRemaining(all::add);
      task.barrier();
      if (task.stageAttemptNumber() > 0) {
        return JavaConverters.asScalaIterator(all.iterator());
      }
      List<Integer> negated = all.stream().map(i -> -i).collect(Collectors.toList());
      if (task.partitionId() == 0) {
        List<Integer> half = new ArrayList<>(negated.subList(0, negated.size() / 2));
        return JavaConverters.asScalaIterator(new FailingIterator<>(half.iterator()));
      }
      task.addTaskCompletionListener(
          (TaskCompletionListener)
              ctx -> {
                throw new IllegalStateException("injected failure of a barrier task");
              });
      return JavaConverters.asScalaIterator(negated.iterator());
    }
  }

  /**
   * Three shuffles: numbers hash-partitioned ({@code partitionBy}, read back in no defined order),
   * then {@code repartition(4)}, whose round-robin map stage over that unordered input Spark marks
   * INDETERMINATE (stage A); stage B reads A's shuffle and sums by key into a third shuffle, which
   * the result stage reads. Stage A puts its input in an order that depends on its stage attempt,
   * as an indeterminate stage may, so each attempt sends other numbers to each partition: a reader
   * mixing attempts loses or doubles numbers. Stage B runs a hook in each task before it reads A's
   * output, to make that read fail.
   */
  static final class IndeterminateStageRerun {
    private final JavaRDD<Integer> stageA;

    /** The shuffles' ids (Spark numbers them as it first asks an RDD for its dependencies). */
    final int inputShuffle;

    final int stageAShuffle;

    IndeterminateStageRerun(SparkSession spark) {
      JavaRDD<Integer> unordered =
          jsc(spark)
              .parallelize(range(12_000), 3)
              .mapToPair(i -> new Tuple2<>(i % 10, i))
              .partitionBy(new org.apache.spark.HashPartitioner(3))
              .values();
      stageA =
          unordered
              .mapPartitions(
                  it -> {
                    List<Integer> all = new ArrayList<>();
                    it.forEachRemaining(all::add);
                    Collections.rotate(all, 1 + 7 * TaskContext.get().stageAttemptNumber());
                    return all.iterator();
                  })
              .repartition(4);
      inputShuffle = shuffleId(unordered.rdd());
      stageAShuffle = shuffleId(stageA.rdd());
    }

    /** Runs the job, {@code beforeRead} in each task of stage B before it reads. */
    List<String> run(TaskHook beforeRead) {
      RDD<Integer> hooked = new BeforeRead<>(stageA.rdd(), beforeRead, INTEGER);
      JavaPairRDD<Integer, Long> sums =
          JavaRDD.fromRDD(hooked, INTEGER)
              .mapToPair(i -> new Tuple2<>(i % 61, (long) i))
              .reduceByKey(Long::sum, 3);
      return sorted(strings(sums.collect()));
    }
  }

  /** The id of the nearest shuffle {@code rdd} reads, through its narrow dependencies. */
  static int shuffleId(RDD<?> rdd) {
    for (org.apache.spark.Dependency<?> dep : JavaConverters.seqAsJavaList(rdd.dependencies())) {
      if (dep instanceof org.apache.spark.ShuffleDependency) {
        return ((org.apache.spark.ShuffleDependency<?, ?, ?>) dep).shuffleId();
      }
      int id = shuffleId(dep.rdd());
      if (id >= 0) {
        return id;
      }
    }
    return -1;
  }

  /** What {@link IndeterminateStageRerun} returns when each number is read once. */
  static List<String> indeterminateStageRerunResult() {
    long[] sums = new long[61];
    for (int i = 0; i < 12_000; i++) {
      sums[i % 61] += i;
    }
    List<String> rows = new ArrayList<>();
    for (int k = 0; k < 61; k++) {
      rows.add(new Tuple2<>(k, sums[k]).toString());
    }
    return sorted(rows);
  }

  /** Code a task runs. */
  interface TaskHook extends Serializable {
    void run(TaskContext task) throws Exception;
  }

  /** Its parent, with {@code hook} run in each task before the parent's iterator is made. */
  static final class BeforeRead<T> extends RDD<T> {
    private static final long serialVersionUID = 1L;
    private final TaskHook hook;
    private final ClassTag<T> tag;

    BeforeRead(RDD<T> parent, TaskHook hook, ClassTag<T> tag) {
      super(parent, tag);
      this.hook = hook;
      this.tag = tag;
    }

    @Override
    public scala.collection.Iterator<T> compute(
        org.apache.spark.Partition split, TaskContext context) {
      try {
        hook.run(context);
      } catch (Exception e) {
        throw new IllegalStateException("the hook before the read failed", e);
      }
      return firstParent(tag).iterator(split, context);
    }

    @Override
    public org.apache.spark.Partition[] getPartitions() {
      return firstParent(tag).partitions();
    }
  }
}
