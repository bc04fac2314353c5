package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.ManualClock;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ServerExclusionsTest {
  private static final ServerAddress A = ClientContext.address("a", 1);
  private static final ServerAddress B = ClientContext.address("b", 1);

  @BeforeEach
  void forgetOtherTests() {
    ServerExclusions.forgetHostWide();
  }

  @Test
  void failedServerIsLeftOutForTheDurationThenUsedAgain() {
    ManualClock clock = new ManualClock();
    ServerExclusions exclusions = new ServerExclusions(60_000, clock);
    exclusions.exclude(A, "connection refused");
    assertThat(exclusions.usable(List.of(A, B))).containsExactly(B);
    clock.advance(59_999);
    assertThat(exclusions.isExcluded(A)).isTrue();
    clock.advance(1);
    assertThat(exclusions.usable(List.of(A, B))).containsExactly(A, B);
  }

  @Test
  void whenEveryServerIsExcludedAllAreUsed() {
    ServerExclusions exclusions = new ServerExclusions(60_000, new ManualClock());
    exclusions.exclude(A, "down");
    exclusions.exclude(B, "down");
    assertThat(exclusions.usable(List.of(A, B))).containsExactly(A, B);
  }

  @Test
  void zeroDurationNeverExcludes() {
    ServerExclusions exclusions = new ServerExclusions(0, new ManualClock());
    exclusions.exclude(A, "down");
    assertThat(exclusions.isExcluded(A)).isFalse();
  }

  @Test
  void theOtherCoordinatorsOfThisJvmLeaveAFailedServerOutForAQuarterOfTheDuration() {
    ServerAddress shared = ClientContext.address("host-wide", 1);
    ManualClock clock = new ManualClock();
    ServerExclusions first = new ServerExclusions(60_000, clock);
    ServerExclusions second = new ServerExclusions(60_000, clock);
    first.exclude(shared, "connection refused");
    assertThat(second.usable(List.of(shared, B))).containsExactly(B);
    clock.advance(15_000);
    assertThat(second.isExcluded(shared)).isFalse();
    assertThat(first.isExcluded(shared)).isTrue();
  }
}
