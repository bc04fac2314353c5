package io.sluice.daemon;

import io.sluice.server.ServerConf;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds data directories and a state store under the system's temporary directory, where the OS may
 * clean files out from under a running server and a reboot may lose them: the defaults put them
 * there so a first run works anywhere, and a production server must not keep them there.
 */
final class TempDirectoryCheck {
  private TempDirectoryCheck() {}

  /** {@code java.io.tmpdir} and {@code /tmp}: the temporary directories of this JVM and the OS. */
  static List<Path> systemTempRoots() {
    Set<Path> roots = new LinkedHashSet<>();
    roots.add(normal(Paths.get(System.getProperty("java.io.tmpdir", "/tmp"))));
    roots.add(Paths.get("/tmp"));
    return new ArrayList<>(roots);
  }

  /**
   * One warning per data directory under one of {@code tempRoots}, and one for the state store when
   * it is there outside every data directory warned about; empty when none is.
   */
  static List<String> warnings(ServerConf conf, List<Path> tempRoots) {
    List<String> warnings = new ArrayList<>();
    List<Path> warned = new ArrayList<>();
    for (Path dir : conf.dirs()) {
      Path root = tempRootOf(normal(dir), tempRoots);
      if (root != null) {
        warned.add(normal(dir));
        warnings.add(
            "data directory "
                + dir
                + " ("
                + ServerConf.DIRS.name()
                + ") is under the temporary directory "
                + root
                + ", which the OS may clean or lose at a reboot, taking committed shuffle data"
                + " with it: give the daemon directories on its data disks with --dirs (or "
                + ServerConf.DIRS.name()
                + " in conf/sluice.conf)");
      }
    }
    Path state = normal(conf.stateDir());
    Path root = tempRootOf(state, tempRoots);
    if (root != null && warned.stream().noneMatch(state::startsWith)) {
      warnings.add(
          "state store "
              + conf.stateDir()
              + " ("
              + ServerConf.STATE_DIR.name()
              + ") is under the temporary directory "
              + root
              + ", which the OS may clean or lose at a reboot, and with it the registered"
              + " shuffles and committed splits a restart recovers: set "
              + ServerConf.STATE_DIR.name()
              + " in conf/sluice.conf to a directory on a data disk (or leave it empty, to keep it"
              + " in the first of --dirs)");
    }
    return warnings;
  }

  private static Path tempRootOf(Path path, List<Path> tempRoots) {
    for (Path root : tempRoots) {
      if (path.startsWith(normal(root))) {
        return root;
      }
    }
    return null;
  }

  private static Path normal(Path path) {
    return path.toAbsolutePath().normalize();
  }
}
