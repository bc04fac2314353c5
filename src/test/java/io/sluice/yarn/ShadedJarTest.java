package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the jar operators drop into the NodeManager holds, and what it must not. */
class ShadedJarTest {
  private static List<String> entries;
  private static Path jar;

  @BeforeAll
  static void listJar() throws Exception {
    jar = Paths.get(System.getProperty("sluice.auxServiceJar"));
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      entries = zip.stream().map(ZipEntry::getName).collect(Collectors.toList());
    }
  }

  @Test
  void everyLibraryButHadoopSlf4jAndRocksDbIsRelocated() {
    for (String prefix :
        List.of(
            "io/netty/", "com/google/protobuf/", "com/codahale/", "com/beust/", "net/jpountz/")) {
      assertThat(entries).as("unrelocated %s", prefix).noneMatch(e -> e.startsWith(prefix));
    }
    for (String prefix : List.of("org/apache/hadoop/", "org/slf4j/", "org/apache/logging/")) {
      assertThat(entries)
          .as("%s comes from the NodeManager", prefix)
          .noneMatch(e -> e.startsWith(prefix));
    }
    assertThat(entries)
        .contains(
            "io/sluice/yarn/SluiceShuffleService.class",
            "io/sluice/server/ShuffleServer.class",
            "io/sluice/shaded/io/netty/channel/epoll/Epoll.class",
            "io/sluice/shaded/com/google/protobuf/Message.class",
            "io/sluice/shaded/com/codahale/metrics/MetricRegistry.class",
            // JNI names its functions after the package: RocksDB cannot be relocated
            "org/rocksdb/RocksDB.class",
            "librocksdbjni-linux64.so",
            "librocksdbjni-linux-aarch64.so");
    assertThat(entries)
        .as("RocksDB's libraries: the supported platforms only (Linux, glibc, x86-64 and aarch64)")
        .filteredOn(e -> e.startsWith("librocksdbjni"))
        .containsExactlyInAnyOrder("librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so");
  }

  @Test
  void nettysNativeLibrariesAreRenamedForTheRelocatedPackage() {
    assertThat(entries)
        .contains(
            "META-INF/native/libio_sluice_shaded_netty_transport_native_epoll_x86_64.so",
            "META-INF/native/libio_sluice_shaded_netty_transport_native_epoll_aarch_64.so")
        .noneMatch(e -> e.startsWith("META-INF/native/libnetty_"));
  }

  @Test
  void sluiceClassesUseTheRelocatedLibraries() throws Exception {
    try (ZipFile zip = new ZipFile(jar.toFile());
        InputStream in = zip.getInputStream(zip.getEntry("io/sluice/server/ShuffleServer.class"))) {
      String constants = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(constants)
          .contains("io/sluice/shaded/com/codahale/metrics/MetricRegistry")
          .doesNotContain("Lcom/codahale/metrics/");
    }
  }
}
