package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real scripts in a temporary directory, as an operator would configure them. */
class TopologyScriptTest {
  @TempDir Path tmp;

  private Path script(String name, String body) throws IOException {
    Path p = tmp.resolve(name);
    Files.writeString(p, "#!/bin/sh\n" + body + "\n", StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
    return p;
  }

  /** Prints /r1 for 10.0.0.1 and 10.0.0.2, /r2 for the rest; logs every host it was asked. */
  private Path goodScript() throws IOException {
    Path calls = tmp.resolve("calls");
    return script(
        "topology.sh",
        "for h in \"$@\"; do\n"
            + "  echo \"$h\" >> "
            + calls
            + "\n"
            + "  case \"$h\" in 10.0.0.1|10.0.0.2) echo /r1 ;; *) echo /r2 ;; esac\n"
            + "done");
  }

  private List<String> calls() throws IOException {
    return Files.readAllLines(tmp.resolve("calls"));
  }

  @Test
  void resolvesEveryHostOnceAndCaches() throws IOException {
    TopologyScript topology = new TopologyScript(goodScript().toString(), 10_000);
    ServerRacks racks = topology.racks(List.of("10.0.0.1", "10.0.0.3", "10.0.0.1"));
    assertThat(racks.rack("10.0.0.1")).isEqualTo("/r1");
    assertThat(racks.rack("10.0.0.3")).isEqualTo("/r2");
    assertThat(racks.rack("10.0.0.9")).isEmpty();
    assertThat(calls()).containsExactly("10.0.0.1", "10.0.0.3");

    ServerRacks more = topology.racks(List.of("10.0.0.3", "10.0.0.2"));
    assertThat(more.rack("10.0.0.2")).isEqualTo("/r1");
    assertThat(more.rack("10.0.0.3")).isEqualTo("/r2");
    assertThat(calls())
        .as("hosts resolved before are not asked again")
        .containsExactly("10.0.0.1", "10.0.0.3", "10.0.0.2");
  }

  @Test
  void racksMaySharePrintedLinesAsInHadoop() throws IOException {
    Path p = script("one-line.sh", "echo /a /b");
    assertThat(new TopologyScript(p.toString(), 10_000).resolve(List.of("h1", "h2")))
        .isEqualTo(Map.of("h1", "/a", "h2", "/b"));
  }

  @Test
  void aFailingScriptIsNamedWithItsHostsAndLeavesThemUnknown() throws IOException {
    Path p = script("failing.sh", "echo 'no such table' >&2\nexit 3");
    TopologyScript topology = new TopologyScript(p.toString(), 10_000);
    assertThatThrownBy(() -> topology.resolve(List.of("h1", "h2")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(p.toString())
        .hasMessageContaining("sluice.topology.script")
        .hasMessageContaining("h1, h2")
        .hasMessageContaining("exited with 3")
        .hasMessageContaining("no such table");
    ServerRacks racks = topology.racks(List.of("h1", "h2"));
    assertThat(racks.knows("h1")).isFalse();
    assertThat(racks).isSameAs(ServerRacks.UNKNOWN);
  }

  @Test
  void theWrongNumberOfRacksIsAnError() throws IOException {
    Path p = script("short.sh", "echo /r1");
    TopologyScript topology = new TopologyScript(p.toString(), 10_000);
    assertThatThrownBy(() -> topology.resolve(List.of("h1", "h2")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(p.toString())
        .hasMessageContaining("h1, h2")
        .hasMessageContaining("printed 1 rack(s) for 2 host(s)");
    assertThat(topology.racks(List.of("h1", "h2")).knows("h1")).isFalse();
  }

  @Test
  void aScriptPastItsTimeoutIsKilledAndItsHostsStayUnknown() throws IOException {
    Path p = script("slow.sh", "sleep 120\necho /r1");
    TopologyScript topology = new TopologyScript(p.toString(), 200);
    assertThatThrownBy(() -> topology.resolve(List.of("h1")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(p.toString())
        .hasMessageContaining("h1")
        .hasMessageContaining("did not finish within 200 ms")
        .hasMessageContaining("sluice.topology.scriptTimeout");
  }

  @Test
  void aMissingScriptIsNamed() {
    String missing = tmp.resolve("missing.sh").toString();
    TopologyScript topology = new TopologyScript(missing, 10_000);
    assertThatThrownBy(() -> topology.resolve(List.of("h1")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(missing)
        .hasMessageContaining("cannot be run");
    assertThat(topology.racks(List.of("h1")).knows("h1")).isFalse();
  }
}
