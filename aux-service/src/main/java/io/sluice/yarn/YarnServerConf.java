package io.sluice.yarn;

import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The server's settings inside a NodeManager: every {@code sluice.*} key of the NodeManager's
 * configuration (yarn-site.xml), with two defaults of its own. Data directories default to a {@code
 * sluice} folder in each of {@code yarn.nodemanager.local-dirs}; the state store defaults to the
 * recovery directory the NodeManager hands the service when NodeManager recovery is on (otherwise
 * to the first data directory, as in the daemon); {@code sluice.disk.maxUsage} defaults to below
 * the NodeManager's own disk-health threshold ({@link #diskMaxUsage}). A key set in yarn-site.xml
 * wins.
 */
final class YarnServerConf {
  static final String DATA_FOLDER = "sluice";

  private YarnServerConf() {}

  /**
   * @param recoveryPath the service's recovery directory, or null when NodeManager recovery is off
   */
  static SluiceConf from(Configuration hadoop, Path recoveryPath) {
    Map<String, String> values = new TreeMap<>();
    for (Map.Entry<String, String> e : hadoop.getPropsWithPrefix("sluice.").entrySet()) {
      values.put("sluice." + e.getKey(), e.getValue());
    }
    if (isBlank(values.get(ServerConf.DIRS.name()))) {
      values.put(ServerConf.DIRS.name(), String.join(",", dataDirs(hadoop)));
    }
    if (isBlank(values.get(ServerConf.STATE_DIR.name())) && recoveryPath != null) {
      values.put(ServerConf.STATE_DIR.name(), localPath(recoveryPath));
    }
    if (isBlank(values.get(ServerConf.DISK_MAX_USAGE.name()))) {
      values.put(ServerConf.DISK_MAX_USAGE.name(), Double.toString(diskMaxUsage(hadoop)));
    }
    return SluiceConf.of(values);
  }

  /**
   * The NodeManager marks a disk bad, and the node unhealthy when every disk is, once the disk is
   * fuller than {@code
   * yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage} (90 by default):
   * Sluice stops taking new splits on a directory {@value #DISK_HEADROOM} below it (0.85 by
   * default), never above its own default, so its data alone never makes the node unhealthy.
   */
  static double diskMaxUsage(Configuration hadoop) {
    float percent =
        hadoop.getFloat(
            YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE,
            YarnConfiguration.DEFAULT_NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE);
    double own = Double.parseDouble(ServerConf.DISK_MAX_USAGE.defaultValue());
    return Math.max(0.05, Math.min(own, percent / 100.0 - DISK_HEADROOM));
  }

  /** How far below the NodeManager's disk-health threshold Sluice stops taking new splits. */
  static final double DISK_HEADROOM = 0.05;

  /** {@code <local-dir>/sluice} for each of the NodeManager's local directories. */
  static List<String> dataDirs(Configuration hadoop) {
    String[] localDirs =
        hadoop.getTrimmedStrings(
            YarnConfiguration.NM_LOCAL_DIRS, YarnConfiguration.DEFAULT_NM_LOCAL_DIRS);
    List<String> dirs = new ArrayList<>();
    for (String dir : localDirs) {
      dirs.add(new java.io.File(localPath(new Path(dir)), DATA_FOLDER).getPath());
    }
    return dirs;
  }

  /** A local directory given as a plain path or a {@code file:} URI. */
  private static String localPath(Path path) {
    return path.toUri().getPath();
  }

  private static boolean isBlank(String s) {
    return s == null || s.trim().isEmpty();
  }
}
