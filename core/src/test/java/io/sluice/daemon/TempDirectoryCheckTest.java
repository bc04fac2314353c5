package io.sluice.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;

class TempDirectoryCheckTest {
  private static final List<Path> TEMP = List.of(Paths.get("/scratch/tmp"), Paths.get("/tmp"));

  private static List<String> warnings(String... settings) {
    SluiceConf conf = SluiceConf.empty();
    for (int i = 0; i < settings.length; i += 2) {
      conf = conf.with(settings[i], settings[i + 1]);
    }
    return TempDirectoryCheck.warnings(new ServerConf(conf), TEMP);
  }

  @Test
  void aDataDirectoryUnderTheTemporaryDirectoryIsNamedWithTheOptionToChange() {
    List<String> warnings = warnings("sluice.server.dirs", "/data/1,/tmp/sluice-data");

    // the state store is in the first directory, on a data disk: one warning
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0))
        .contains("/tmp/sluice-data", "sluice.server.dirs", "--dirs", "temporary directory /tmp");
  }

  @Test
  void theJvmsTemporaryDirectoryCountsToo() {
    assertThat(warnings("sluice.server.dirs", "/scratch/tmp/sluice-data"))
        .singleElement()
        .asString()
        .contains("/scratch/tmp/sluice-data", "--dirs");
  }

  @Test
  void aStateStoreInAWarnedDataDirectoryIsNotWarnedTwice() {
    assertThat(warnings("sluice.server.dirs", "/tmp/a")).hasSize(1);
  }

  @Test
  void aStateStoreOfItsOwnUnderTheTemporaryDirectoryIsNamed() {
    assertThat(warnings("sluice.server.dirs", "/data/1", "sluice.state.dir", "/tmp/state"))
        .singleElement()
        .asString()
        .contains("/tmp/state", "sluice.state.dir");
  }

  @Test
  void directoriesOnDataDisksAreFine() {
    assertThat(warnings("sluice.server.dirs", "/data/1,/data/tmpfiles,/tmpdata")).isEmpty();
  }
}
