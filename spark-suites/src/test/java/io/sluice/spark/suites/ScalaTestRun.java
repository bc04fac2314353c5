package io.sluice.spark.suites;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.scalatest.Args;
import org.scalatest.ConfigMap$;
import org.scalatest.DynaTags;
import org.scalatest.Filter$;
import org.scalatest.Reporter;
import org.scalatest.Stopper;
import org.scalatest.Suite;
import org.scalatest.Tracker;
import org.scalatest.events.Event;
import org.scalatest.events.Ordinal;
import org.scalatest.events.SuiteAborted;
import org.scalatest.events.TestCanceled;
import org.scalatest.events.TestFailed;
import org.scalatest.events.TestIgnored;
import org.scalatest.events.TestPending;
import org.scalatest.events.TestSucceeded;
import scala.Option;
import scala.collection.JavaConverters;

/**
 * Runs one ScalaTest suite in this JVM, as ScalaTest's own runner would, and keeps each test's
 * outcome. Excluded tests are tagged {@code org.scalatest.Ignore} (ScalaTest's dynamic tags), so
 * the suite reports them as ignored without running them, and its fixtures run once as usual.
 */
final class ScalaTestRun {
  private static final String IGNORE = "org.scalatest.Ignore";

  /** How one test ended. */
  enum Outcome {
    SUCCEEDED,
    FAILED,
    IGNORED,
    CANCELED
  }

  /** One test's outcome, with the failure's message and cause when it failed or was canceled. */
  record Result(String test, Outcome outcome, String message, Throwable cause) {}

  private ScalaTestRun() {}

  /**
   * Runs {@code suite} without the tests in {@code excluded} and returns every test's outcome in
   * the order the suite reported them, plus one failed result named after the suite when it
   * aborted.
   *
   * @throws IllegalArgumentException when {@code excluded} names a test the suite does not have
   */
  static List<Result> run(Suite suite, Set<String> excluded) {
    Set<String> names = new HashSet<>(JavaConverters.setAsJavaSet(suite.testNames()));
    for (String test : excluded) {
      if (!names.contains(test)) {
        throw new IllegalArgumentException(
            "The exclusion file names a test that "
                + suite.suiteName()
                + " does not have: "
                + test);
      }
    }
    Map<String, scala.collection.immutable.Set<String>> tags = new HashMap<>();
    for (String test : excluded) {
      tags.put(test, scalaSet(Set.of(IGNORE)));
    }
    Map<String, scala.collection.immutable.Map<String, scala.collection.immutable.Set<String>>>
        bySuite = new HashMap<>();
    bySuite.put(suite.suiteId(), scalaMap(tags));
    DynaTags dynaTags = new DynaTags(scalaMap(new HashMap<>()), scalaMap(bySuite));
    Collector collector = new Collector(suite.suiteName());
    Args args =
        new Args(
            collector,
            new NeverStop(),
            Filter$.MODULE$.apply(Option.empty(), scalaSet(Set.of(IGNORE)), false, dynaTags),
            ConfigMap$.MODULE$.empty(),
            Option.empty(),
            new Tracker(new Ordinal(0)),
            scalaSet(Set.of()),
            false,
            Option.empty(),
            Option.empty());
    suite.run(Option.empty(), args).waitUntilCompleted();
    return collector.results();
  }

  private static <T> scala.collection.immutable.Set<T> scalaSet(Set<T> set) {
    return JavaConverters.asScalaSetConverter(set).asScala().toSet();
  }

  private static <K, V> scala.collection.immutable.Map<K, V> scalaMap(Map<K, V> map) {
    return JavaConverters.mapAsScalaMapConverter(map)
        .asScala()
        .toMap(scala.Predef$.MODULE$.$conforms());
  }

  /** A run is never stopped early: every test runs or is reported ignored. */
  private static final class NeverStop implements Stopper {
    @Override
    public boolean stopRequested() {
      return false;
    }

    @Override
    public void requestStop() {}
  }

  /** Keeps the test events of one suite; the suite reports from its own threads. */
  private static final class Collector implements Reporter {
    private final String suiteName;
    private final Map<String, Result> results = new LinkedHashMap<>();
    private final List<Result> aborts = new ArrayList<>();

    Collector(String suiteName) {
      this.suiteName = suiteName;
    }

    @Override
    public synchronized void apply(Event event) {
      if (event instanceof TestSucceeded e) {
        add(new Result(e.testName(), Outcome.SUCCEEDED, null, null));
      } else if (event instanceof TestFailed e) {
        add(new Result(e.testName(), Outcome.FAILED, e.message(), orNull(e.throwable())));
      } else if (event instanceof TestIgnored e) {
        add(new Result(e.testName(), Outcome.IGNORED, null, null));
      } else if (event instanceof TestCanceled e) {
        add(new Result(e.testName(), Outcome.CANCELED, e.message(), orNull(e.throwable())));
      } else if (event instanceof TestPending e) {
        add(new Result(e.testName(), Outcome.CANCELED, "pending", null));
      } else if (event instanceof SuiteAborted e) {
        aborts.add(
            new Result(suiteName + " aborted", Outcome.FAILED, e.message(), orNull(e.throwable())));
      }
    }

    private static Throwable orNull(Option<Throwable> t) {
      return t.isDefined() ? t.get() : null;
    }

    private void add(Result r) {
      results.put(r.test(), r);
    }

    synchronized List<Result> results() {
      List<Result> all = new ArrayList<>(results.values());
      all.addAll(aborts);
      return all;
    }
  }
}
