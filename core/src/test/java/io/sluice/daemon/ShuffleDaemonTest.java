package io.sluice.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.beust.jcommander.JCommander;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configuration layering and the failing paths of {@link ShuffleDaemon#run}. A run that starts
 * successfully blocks until the JVM stops, so only start-ups that must fail are run here; the
 * timeout interrupts (and so ends) one that unexpectedly succeeds.
 */
@Timeout(60)
class ShuffleDaemonTest {
  @TempDir Path dir;

  private static DaemonOptions parse(String... args) {
    DaemonOptions options = new DaemonOptions();
    JCommander.newBuilder().addObject(options).build().parse(args);
    return options;
  }

  private Path write(String name, String text) throws IOException {
    Path file = dir.resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }

  @Test
  void withNoHomeAndNoOptionsTheConfIsEmpty() throws IOException {
    SluiceConf conf = ShuffleDaemon.loadConf(parse(), null);

    assertThat(conf.asMap()).isEmpty();
    assertThat(conf.get(ServerConf.PORT)).isEqualTo(9290);
  }

  @Test
  void readsTheDefaultsFileUnderHome() throws IOException {
    write("conf/sluice-defaults.conf", "sluice.server.port = 1234\nsluice.flush.size = 2m\n");

    SluiceConf conf = ShuffleDaemon.loadConf(parse(), dir.toString());

    assertThat(conf.get(ServerConf.PORT)).isEqualTo(1234);
    assertThat(conf.get(ServerConf.FLUSH_SIZE)).isEqualTo(2L << 20);
  }

  @Test
  void aHomeWithoutADefaultsFileIsFine() throws IOException {
    assertThat(ShuffleDaemon.loadConf(parse(), dir.toString()).asMap()).isEmpty();
  }

  @Test
  void layersDefaultsThenConfFileThenSetThenNamedOptions() throws IOException {
    write(
        "conf/sluice-defaults.conf",
        "sluice.server.port = 1\nsluice.server.host = defaults\nsluice.flush.size = 1m\n"
            + "sluice.commit.fsync = true\n");
    Path confFile =
        write(
            "site.conf",
            "sluice.server.port = 2\nsluice.server.host = conf-file\nsluice.flush.size = 2m\n");

    SluiceConf conf =
        ShuffleDaemon.loadConf(
            parse(
                "--conf",
                confFile.toString(),
                "--set",
                "sluice.server.port=3",
                "--set",
                " sluice.flush.size = 3m ",
                "-D",
                "sluice.flush.size=4m",
                "--port",
                "4"),
            dir.toString());

    assertThat(conf.get(ServerConf.COMMIT_FSYNC)).isTrue(); // defaults file only
    assertThat(conf.get(ServerConf.HOST)).isEqualTo("conf-file"); // --conf over defaults
    assertThat(conf.get(ServerConf.FLUSH_SIZE)).isEqualTo(4L << 20); // last --set wins
    assertThat(conf.get(ServerConf.PORT)).isEqualTo(4); // --port over --set
  }

  @Test
  void theSitesConfFileLiesBetweenTheDefaultsAndConf() throws IOException {
    write("conf/sluice-defaults.conf", "sluice.server.port = 1\nsluice.flush.size = 1m\n");
    write("conf/sluice.conf", "sluice.server.port = 2\nsluice.server.host = site\n");
    Path confFile = write("other.conf", "sluice.server.host = conf-file\n");

    SluiceConf site = ShuffleDaemon.loadConf(parse(), dir.toString());
    assertThat(site.get(ServerConf.FLUSH_SIZE)).isEqualTo(1L << 20); // defaults only
    assertThat(site.get(ServerConf.PORT)).isEqualTo(2); // sluice.conf over the defaults
    assertThat(site.get(ServerConf.HOST)).isEqualTo("site");

    SluiceConf conf = ShuffleDaemon.loadConf(parse("--conf", confFile.toString()), dir.toString());
    assertThat(conf.get(ServerConf.PORT)).isEqualTo(2);
    assertThat(conf.get(ServerConf.HOST)).isEqualTo("conf-file"); // --conf over sluice.conf
  }

  @Test
  void aLaterConfFileWins() throws IOException {
    Path first = write("first.conf", "sluice.server.port = 1\nsluice.server.host = first\n");
    Path second = write("second.conf", "sluice.server.port = 2\n");

    SluiceConf conf =
        ShuffleDaemon.loadConf(
            parse("--conf", first.toString(), "--conf", second.toString()), null);

    assertThat(conf.get(ServerConf.PORT)).isEqualTo(2);
    assertThat(conf.get(ServerConf.HOST)).isEqualTo("first");
  }

  @Test
  void namedOptionsSetTheirKeys() throws IOException {
    SluiceConf conf =
        ShuffleDaemon.loadConf(
            parse(
                "--set",
                "sluice.memory.max=1g",
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--dirs",
                "/a,/b",
                "--memory",
                "2g"),
            null);

    assertThat(conf.asMap())
        .containsEntry("sluice.server.port", "0")
        .containsEntry("sluice.server.host", "127.0.0.1")
        .containsEntry("sluice.server.dirs", "/a,/b")
        .containsEntry("sluice.memory.max", "2g");
    assertThat(new ServerConf(conf).dirs()).containsExactly(Path.of("/a"), Path.of("/b"));
  }

  @Test
  void setKeepsEverythingAfterTheFirstEquals() throws IOException {
    SluiceConf conf = ShuffleDaemon.loadConf(parse("--set", "sluice.server.dirs=/a=b"), null);

    assertThat(conf.get(ServerConf.DIRS)).isEqualTo("/a=b");
  }

  @Test
  void aSetWithoutKeyOrEqualsIsAnError() {
    for (String bad : new String[] {"sluice.server.port", "=9000"}) {
      assertThatThrownBy(() -> ShuffleDaemon.loadConf(parse("--set", bad), null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--set expects key=value")
          .hasMessageContaining("'" + bad + "'");
    }
  }

  @Test
  void aMissingConfFileIsAnErrorNamingIt() {
    Path missing = dir.resolve("nope.conf");

    assertThatThrownBy(() -> ShuffleDaemon.loadConf(parse("--conf", missing.toString()), null))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("--conf")
        .hasMessageContaining(missing.toString());
  }

  @Test
  void helpPrintsTheOptions() {
    Result result = run("--help");

    assertThat(result.code).isZero();
    assertThat(result.out).contains("--port", "--dirs", "--memory", "--conf", "--set");
  }

  @Test
  void anUnknownOptionExitsWith2() {
    Result result = run("--bogus");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("shuffle-daemon: ", "--bogus", "--help");
  }

  @Test
  void aNonNumericPortExitsWith2() {
    Result result = run("--port", "http");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("--port", "http");
  }

  @Test
  void aBadSizeExitsWith2NamingTheKeyAndTheValue() {
    Result result = run("--port", "0", "--dirs", dir.toString(), "--memory", "12zz");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err)
        .contains("configuration error", "sluice.memory.max", "'12zz'")
        .doesNotContain("Exception");
  }

  @Test
  void anOutOfRangePortExitsWith2() {
    Result result = run("--port", "70000", "--dirs", dir.toString());

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("configuration error", "sluice.server.port", "70000");
  }

  @Test
  void aBadNetworkSettingExitsWith2() {
    Result result =
        run("--port", "0", "--dirs", dir.toString(), "--set", "sluice.network.maxFrameSize=1");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("configuration error", "sluice.network.maxFrameSize");
  }

  @Test
  void aBadSetExitsWith2() {
    Result result = run("--port", "0", "--dirs", dir.toString(), "--set", "sluice.flush.size");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("configuration error", "--set expects key=value");
  }

  @Test
  void aMissingConfFileExitsWith2() {
    Path missing = dir.resolve("missing.conf");

    Result result = run("--conf", missing.toString());

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err).contains("configuration error", missing.toString());
  }

  @Test
  void warnsOfAMisspelledKeyByNameWithTheKeyItMeantAndWithoutItsValue() {
    // the start-up fails on the port after the warning, so the run ends
    Result result =
        run(
            "--port",
            "70000",
            "--dirs",
            dir.toString(),
            "--set",
            "sluice.auth.clusterSecert=hunter2",
            "--set",
            "sluice.memroy.max=1g");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.err)
        .contains(
            "shuffle-daemon: warning: unknown configuration key sluice.auth.clusterSecert"
                + " (ignored); did you mean sluice.auth.clusterSecret?",
            "shuffle-daemon: warning: unknown configuration key sluice.memroy.max (ignored);"
                + " did you mean sluice.memory.max?")
        .doesNotContain("hunter2");
  }

  private static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = ShuffleDaemon.run(args, o, e);
    }
    return new Result(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static final class Result {
    final int code;
    final String out;
    final String err;

    Result(int code, String out, String err) {
      this.code = code;
      this.out = out;
      this.err = err;
    }
  }
}
