package io.sluice.server.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.storage.SplitKey;
import org.junit.jupiter.api.Test;

/** The layout of format version 1 is what stores on disk hold: it must not drift. */
class StateKeysTest {
  @Test
  void integersAreTenZeroPaddedDigits() {
    assertThat(StateKeys.string(StateKeys.committedSplit(new SplitKey("app-1", 7, 123, 0))))
        .isEqualTo("split/app-1/0000000007/0000000123/0000000000");
    assertThat(
            StateKeys.string(
                StateKeys.openSplit(new SplitKey("app-1", Integer.MAX_VALUE, 1_000_000_000, 9))))
        .isEqualTo("open/app-1/2147483647/1000000000/0000000009");
    assertThat(StateKeys.string(StateKeys.shuffle("app-1", 42)))
        .isEqualTo("shuffle/app-1/0000000042");
  }
}
