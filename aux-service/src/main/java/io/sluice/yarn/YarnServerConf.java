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
 * to the first data directory, as in the daemon). A key set in yarn-site.xml wins.
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
    return SluiceConf.of(values);
  }

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
