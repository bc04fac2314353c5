package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The parsing {@code --disk hdd} relies on, on the kernel's own formats. */
class DiskEmulationTest {
  @Test
  void devicesNumbersDecodeAsTheKernelEncodesThem() {
    // makedev(254, 0) and makedev(259, 65537): the second needs the high bits of both numbers
    assertThat(DiskEmulation.major(0xfe00L)).isEqualTo(254);
    assertThat(DiskEmulation.minor(0xfe00L)).isEqualTo(0);
    long dev = (259L & 0xfff) << 8 | (65537L & 0xff) | ((65537L & ~0xffL) << 12);
    assertThat(DiskEmulation.major(dev)).isEqualTo(259);
    assertThat(DiskEmulation.minor(dev)).isEqualTo(65537);
  }

  @Test
  void countersAreReadForTheDeviceOnly() {
    String serviced =
        "8:0 Read 7\n8:0 Write 9\n254:0 Read 402\n254:0 Write 12\n254:0 Sync 402\n"
            + "254:0 Async 12\n254:0 Total 414\nTotal 430\n";
    assertThat(DiskEmulation.readWrite(serviced, "254:0")).containsExactly(402, 12);
    assertThat(DiskEmulation.readWrite(serviced, "9:9")).containsExactly(0, 0);
  }

  @Test
  void theOwnCgroupOfAControllerIsFound() throws IOException {
    List<String> lines =
        List.of("9:name=systemd:/", "7:blkio:/", "4:memory:/process_api/abc", "1:cpu,cpuacct:/x");
    assertThat(DiskEmulation.relative(lines, "memory")).isEqualTo("process_api/abc");
    assertThat(DiskEmulation.relative(lines, "blkio")).isEmpty();
    assertThat(DiskEmulation.relative(lines, "cpuacct")).isEqualTo("x");
    assertThatThrownBy(() -> DiskEmulation.relative(lines, "io"))
        .hasMessageContaining("no io cgroup");
  }
}
