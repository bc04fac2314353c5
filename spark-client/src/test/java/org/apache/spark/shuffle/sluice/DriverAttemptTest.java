package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.common.Ids;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DriverAttemptTest {
  @Test
  void eachDriverAttemptIsAnApplicationOfItsOwnAndReleasesTheOnesBefore() {
    DriverAttempt first = new DriverAttempt("application_1700000000000_0042", Optional.of("1"));
    DriverAttempt third = new DriverAttempt("application_1700000000000_0042", Optional.of("3"));
    assertThat(first.appId()).isEqualTo("application_1700000000000_0042-attempt-1");
    assertThat(third.appId()).isNotEqualTo(first.appId());
    assertThat(Ids.checkAppId(third.appId())).isEqualTo(third.appId());
    assertThat(first.earlierAppIds()).isEmpty();
    assertThat(third.earlierAppIds())
        .containsExactly(
            "application_1700000000000_0042-attempt-1", "application_1700000000000_0042-attempt-2");
  }

  @Test
  void withoutAnAttemptIdTheApplicationIsSparksOwn() {
    DriverAttempt local = new DriverAttempt("local-1700000000000", Optional.empty());
    assertThat(local.appId()).isEqualTo("local-1700000000000");
    assertThat(local.earlierAppIds()).isEmpty();
  }
}
