package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A disk that seeks, emulated on the device under a benchmark's directory ({@code --disk hdd}), for
 * this JVM and every process it starts afterwards (the Sluice servers here, the Spark driver and
 * its executors), so both shuffles get the same disk:
 *
 * <ul>
 *   <li>an IOPS and bandwidth limit on the device (cgroup v1 {@code blkio.throttle.*}). Cgroup v1
 *       throttles reads and direct or synchronous writes; buffered writes reach the disk through
 *       the kernel's writeback, which v1 does not charge to the cgroup, so writes are not limited;
 *   <li>no page cache of the shuffle files to read from: every {@code dropEveryMillis} a helper
 *       ({@code python3}, whose {@code os.posix_fadvise} Java lacks) asks the kernel to drop the
 *       cached pages of every file under the directory ({@code POSIX_FADV_DONTNEED}; dirty pages
 *       are written back first and dropped the next round), so that reads reach the device. The
 *       processes' own jars and classes stay cached, as on a real host. (A memory cgroup cap
 *       charges the page cache and the JVMs' memory to one limit: tight enough to keep the shuffle
 *       files out of memory, it made JVMs fail to commit memory. Dropping the whole machine's cache
 *       made every JVM re-read its jars from the throttled disk.)
 * </ul>
 *
 * <p>It needs root, the v1 {@code blkio} controller and {@code python3}; {@link #start} says what
 * is missing otherwise. The device's operations and bytes, read and written, are counted ({@link
 * #counters}) so a report can show what each side asked of the disk.
 */
final class DiskEmulation implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskEmulation.class);
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  /** Limits of the emulated disk. */
  static final class Limits {
    final int iops;
    final long bytesPerSecond;
    final long dropEveryMillis;

    Limits(int iops, long bytesPerSecond, long dropEveryMillis) {
      this.iops = iops;
      this.bytesPerSecond = bytesPerSecond;
      this.dropEveryMillis = dropEveryMillis;
    }

    String json() {
      return "{\"iops\":"
          + iops
          + ",\"bytesPerSecond\":"
          + bytesPerSecond
          + ",\"pageCacheDroppedEveryMillis\":"
          + dropEveryMillis
          + "}";
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "%d IOPS, %.0f MB/s, page cache dropped every %d ms",
          iops,
          bytesPerSecond / 1e6,
          dropEveryMillis);
    }
  }

  /** What the device did for the processes: operations and bytes, read and written. */
  static final class Counters {
    final long readOps;
    final long writeOps;
    final long readBytes;
    final long writeBytes;

    Counters(long readOps, long writeOps, long readBytes, long writeBytes) {
      this.readOps = readOps;
      this.writeOps = writeOps;
      this.readBytes = readBytes;
      this.writeBytes = writeBytes;
    }

    Counters minus(Counters before) {
      return new Counters(
          readOps - before.readOps,
          writeOps - before.writeOps,
          readBytes - before.readBytes,
          writeBytes - before.writeBytes);
    }

    String json() {
      return "{\"readOps\":"
          + readOps
          + ",\"writeOps\":"
          + writeOps
          + ",\"readBytes\":"
          + readBytes
          + ",\"writeBytes\":"
          + writeBytes
          + "}";
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "disk %d reads (%.1f MiB), %d writes (%.1f MiB)",
          readOps,
          readBytes / 1048576.0,
          writeOps,
          writeBytes / 1048576.0);
    }
  }

  private final String device;
  private final Path dir;
  private final Path blkio;
  private final Path blkioBefore;
  private final Limits limits;
  private Process dropper;

  /**
   * Drops the cached pages of every file under {@code argv[1]}, every {@code argv[2]} seconds,
   * until its parent (this JVM) ends: its standard input closes.
   */
  private static final String DROPPER =
      String.join(
          "\n",
          "import os, sys, threading, time",
          "root, every = sys.argv[1], float(sys.argv[2])",
          "threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()",
          "while True:",
          "    for d, _, names in os.walk(root):",
          "        for n in names:",
          "            try:",
          "                fd = os.open(os.path.join(d, n), os.O_RDONLY)",
          "                try:",
          "                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)",
          "                finally:",
          "                    os.close(fd)",
          "            except OSError:",
          "                pass",
          "    time.sleep(every)");

  private DiskEmulation(String device, Path dir, Path blkio, Path blkioBefore, Limits limits) {
    this.device = device;
    this.dir = dir;
    this.blkio = blkio;
    this.blkioBefore = blkioBefore;
    this.limits = limits;
  }

  /**
   * Emulates the disk for this JVM and what it starts from now on.
   *
   * @throws IOException saying what this host lacks (root, the v1 blkio controller, a block device
   *     under {@code dir}), or why the cgroup could not be set up
   */
  static DiskEmulation start(Path dir, Limits limits) throws IOException {
    Path blkioRoot = CGROUPS.resolve("blkio");
    if (!Files.isDirectory(blkioRoot)) {
      throw new IOException(
          "--disk hdd needs the cgroup v1 blkio controller (/sys/fs/cgroup/blkio); this host has "
              + (Files.exists(CGROUPS.resolve("cgroup.controllers"))
                  ? "cgroup v2 only"
                  : "no cgroups mounted there"));
    }
    if (!Files.isWritable(blkioRoot)) {
      throw new IOException(
          "--disk hdd needs root: it creates a cgroup under /sys/fs/cgroup/blkio");
    }
    String device = wholeDisk(dir);
    long pid = ProcessHandle.current().pid();
    List<String> own = Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8);
    Path blkioBefore = blkioRoot.resolve(relative(own, "blkio"));
    Path blkio = Files.createDirectories(blkioBefore.resolve("sluice-bench-" + pid));
    DiskEmulation d = new DiskEmulation(device, dir, blkio, blkioBefore, limits);
    try {
      for (String kind : List.of("read", "write")) {
        write(blkio.resolve("blkio.throttle." + kind + "_iops_device"), device + " " + limits.iops);
        write(
            blkio.resolve("blkio.throttle." + kind + "_bps_device"),
            device + " " + limits.bytesPerSecond);
      }
      write(blkio.resolve("cgroup.procs"), Long.toString(pid));
      d.dropper =
          new ProcessBuilder(
                  "python3",
                  "-c",
                  DROPPER,
                  dir.toString(),
                  Double.toString(limits.dropEveryMillis / 1000.0))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (IOException | RuntimeException e) {
      d.close();
      throw new IOException(
          "cannot set up --disk hdd on "
              + device
              + " (it needs python3 on the PATH): "
              + e.getMessage(),
          e);
    }
    return d;
  }

  /** The device ("major:minor") limited: the whole disk holding the benchmark's directory. */
  String device() {
    return device;
  }

  Limits limits() {
    return limits;
  }

  /** What the device did for the processes so far. */
  Counters counters() throws IOException {
    long[] ops = readWrite(Files.readString(blkio.resolve("blkio.throttle.io_serviced")), device);
    long[] bytes =
        readWrite(Files.readString(blkio.resolve("blkio.throttle.io_service_bytes")), device);
    return new Counters(ops[0], ops[1], bytes[0], bytes[1]);
  }

  /** Moves this JVM back and removes the cgroup (the children have ended). */
  @Override
  public void close() {
    if (dropper != null) {
      dropper.destroy();
    }
    try {
      write(blkioBefore.resolve("cgroup.procs"), Long.toString(ProcessHandle.current().pid()));
      Files.deleteIfExists(blkio);
    } catch (IOException e) {
      LOG.warn("--disk hdd: could not remove its cgroup {}: {}", blkio, e.toString());
    }
  }

  /** The "major:minor" of the whole disk holding {@code dir} (a partition's parent disk). */
  static String wholeDisk(Path dir) throws IOException {
    long dev = (Long) Files.getAttribute(dir, "unix:dev");
    String device = major(dev) + ":" + minor(dev);
    Path sys = Path.of("/sys/dev/block", device);
    if (major(dev) == 0 || !Files.exists(sys)) {
      throw new IOException(
          dir
              + " is not on a block device (device "
              + device
              + ": tmpfs or another virtual file system); put --dir on a disk");
    }
    if (Files.exists(sys.resolve("partition"))) {
      // /sys/dev/block/M:m links to .../block/<disk>/<partition>: its parent is the disk
      return Files.readString(sys.toRealPath().getParent().resolve("dev")).trim();
    }
    return device;
  }

  static long major(long dev) {
    return ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
  }

  static long minor(long dev) {
    return (dev & 0xff) | ((dev >>> 12) & ~0xffL);
  }

  /** The path of this process's cgroup of {@code controller} from /proc/self/cgroup's lines. */
  static String relative(List<String> procSelfCgroup, String controller) throws IOException {
    for (String line : procSelfCgroup) {
      String[] f = line.split(":", 3);
      if (f.length == 3 && List.of(f[1].split(",")).contains(controller)) {
        return f[2].startsWith("/") ? f[2].substring(1) : f[2];
      }
    }
    throw new IOException("this process is in no " + controller + " cgroup (/proc/self/cgroup)");
  }

  /** Read and Write of {@code device} in a blkio.throttle.io_serviced (or _bytes) text. */
  static long[] readWrite(String text, String device) {
    long[] rw = new long[2];
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 3 && f[0].equals(device)) {
        if (f[1].equals("Read")) {
          rw[0] = Long.parseLong(f[2]);
        } else if (f[1].equals("Write")) {
          rw[1] = Long.parseLong(f[2]);
        }
      }
    }
    return rw;
  }

  private static void write(Path file, String value) throws IOException {
    Files.writeString(file, value);
  }
}
