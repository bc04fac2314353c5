package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 *   <li>a page-cache cap (a cgroup v1 memory limit kept at the processes' anonymous memory plus the
 *       cap, re-set every 100 ms), so that reads reach the device instead of the page cache. The
 *       kernel's OOM killer is off in that cgroup: a process that allocates faster than the limit
 *       follows waits for the next round instead of being killed.
 * </ul>
 *
 * <p>It needs root and the v1 {@code blkio} and {@code memory} controllers; {@link #start} says
 * what is missing otherwise. The device's operations and bytes, read and written, are counted
 * ({@link #counters}) so a report can show what each side asked of the disk.
 */
final class DiskEmulation implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskEmulation.class);
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  /** Room above the anonymous memory and the cap, for what the JVMs allocate between two rounds. */
  private static final long SLACK = 256L << 20;

  /** Limits of the emulated disk. */
  static final class Limits {
    final int iops;
    final long bytesPerSecond;
    final long pageCacheBytes;

    Limits(int iops, long bytesPerSecond, long pageCacheBytes) {
      this.iops = iops;
      this.bytesPerSecond = bytesPerSecond;
      this.pageCacheBytes = pageCacheBytes;
    }

    String json() {
      return "{\"iops\":"
          + iops
          + ",\"bytesPerSecond\":"
          + bytesPerSecond
          + ",\"pageCacheBytes\":"
          + pageCacheBytes
          + "}";
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "%d IOPS, %.0f MB/s, page cache %d MiB",
          iops,
          bytesPerSecond / 1e6,
          pageCacheBytes >> 20);
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
  private final Path blkio;
  private final Path memory;
  private final Path blkioBefore;
  private final Path memoryBefore;
  private final Limits limits;
  private final ScheduledExecutorService cacheCap =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "disk-emulation-page-cache");
            t.setDaemon(true);
            return t;
          });

  private DiskEmulation(
      String device, Path blkio, Path memory, Path blkioBefore, Path memoryBefore, Limits limits) {
    this.device = device;
    this.blkio = blkio;
    this.memory = memory;
    this.blkioBefore = blkioBefore;
    this.memoryBefore = memoryBefore;
    this.limits = limits;
  }

  /**
   * Emulates the disk for this JVM and what it starts from now on.
   *
   * @throws IOException saying what this host lacks (root, the v1 controllers, a block device under
   *     {@code dir}), or why a cgroup could not be set up
   */
  static DiskEmulation start(Path dir, Limits limits) throws IOException {
    Path blkioRoot = CGROUPS.resolve("blkio");
    Path memoryRoot = CGROUPS.resolve("memory");
    if (!Files.isDirectory(blkioRoot) || !Files.isDirectory(memoryRoot)) {
      throw new IOException(
          "--disk hdd needs the cgroup v1 blkio and memory controllers (/sys/fs/cgroup/blkio,"
              + " /sys/fs/cgroup/memory); this host has "
              + (Files.exists(CGROUPS.resolve("cgroup.controllers"))
                  ? "cgroup v2 only"
                  : "neither"));
    }
    if (!Files.isWritable(blkioRoot) || !Files.isWritable(memoryRoot)) {
      throw new IOException(
          "--disk hdd needs root: it creates cgroups under /sys/fs/cgroup/blkio and"
              + " /sys/fs/cgroup/memory");
    }
    String device = wholeDisk(dir);
    long pid = ProcessHandle.current().pid();
    List<String> own = Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8);
    Path blkioBefore = blkioRoot.resolve(relative(own, "blkio"));
    Path memoryBefore = memoryRoot.resolve(relative(own, "memory"));
    Path blkio = Files.createDirectories(blkioBefore.resolve("sluice-bench-" + pid));
    Path memory = Files.createDirectories(memoryBefore.resolve("sluice-bench-" + pid));
    DiskEmulation d = new DiskEmulation(device, blkio, memory, blkioBefore, memoryBefore, limits);
    try {
      for (String kind : List.of("read", "write")) {
        write(blkio.resolve("blkio.throttle." + kind + "_iops_device"), device + " " + limits.iops);
        write(
            blkio.resolve("blkio.throttle." + kind + "_bps_device"),
            device + " " + limits.bytesPerSecond);
      }
      write(blkio.resolve("cgroup.procs"), Long.toString(pid));
      d.capPageCache();
      write(memory.resolve("memory.oom_control"), "1");
      write(memory.resolve("cgroup.procs"), Long.toString(pid));
      d.cacheCap.scheduleWithFixedDelay(d::capPageCache, 100, 100, TimeUnit.MILLISECONDS);
    } catch (IOException | RuntimeException e) {
      d.close();
      throw new IOException("cannot set up --disk hdd on " + device + ": " + e.getMessage(), e);
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

  /** Sets the memory limit to the processes' anonymous memory plus the page-cache cap. */
  private void capPageCache() {
    try {
      long anonymous = stat(Files.readString(memory.resolve("memory.stat")), "total_rss");
      write(
          memory.resolve("memory.limit_in_bytes"),
          Long.toString(anonymous + limits.pageCacheBytes + SLACK));
    } catch (IOException e) {
      // busy while the kernel reclaims: the next round sets it
    }
  }

  /** Moves this JVM back, lifts the limits and removes the cgroups (the children have ended). */
  @Override
  public void close() {
    cacheCap.shutdownNow();
    String pid = Long.toString(ProcessHandle.current().pid());
    try {
      write(blkioBefore.resolve("cgroup.procs"), pid);
      write(memoryBefore.resolve("cgroup.procs"), pid);
      Files.deleteIfExists(blkio);
      Files.deleteIfExists(memory);
    } catch (IOException e) {
      LOG.warn(
          "--disk hdd: could not remove its cgroups {} and {}: {}", blkio, memory, e.toString());
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

  /** The value of {@code key} in a memory.stat text; 0 when absent. */
  static long stat(String text, String key) {
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 2 && f[0].equals(key)) {
        return Long.parseLong(f[1]);
      }
    }
    return 0;
  }

  private static void write(Path file, String value) throws IOException {
    Files.writeString(file, value);
  }
}
