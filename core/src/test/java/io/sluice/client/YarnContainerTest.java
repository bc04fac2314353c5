package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class YarnContainerTest {
  @Test
  void namesTheApplicationOfAContainerId() {
    assertThat(YarnContainer.applicationId("container_1410901177871_0001_01_000005"))
        .isEqualTo("application_1410901177871_0001");
    assertThat(YarnContainer.applicationId("container_e17_1410901177871_0023_01_000001"))
        .as("with an RM epoch")
        .isEqualTo("application_1410901177871_0023");
  }

  @Test
  void anythingElseIsNoApplication() {
    assertThat(YarnContainer.applicationId(null)).isEmpty();
    assertThat(YarnContainer.applicationId("")).isEmpty();
    assertThat(YarnContainer.applicationId("container_")).isEmpty();
    assertThat(YarnContainer.applicationId("container_abc_0001_01_000005")).isEmpty();
    assertThat(YarnContainer.applicationId("container_1410901177871_0001_01")).isEmpty();
    assertThat(YarnContainer.applicationId("task_1410901177871_0001_01_000005")).isEmpty();
  }
}
