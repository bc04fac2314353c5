package io.sluice.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.auth.AuthConf;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretSettingsTest {
  @Test
  void keysNamingASecretTokenPasswordOrKeyLookSecretWhateverTheirCase() {
    assertThat(SecretSettings.looksSecret(AuthConf.CLUSTER_SECRET.name())).isTrue();
    assertThat(SecretSettings.looksSecret("sluice.admin.token")).isTrue();
    assertThat(SecretSettings.looksSecret("sluice.tls.keyStorePassword")).isTrue();
    assertThat(SecretSettings.looksSecret("sluice.tls.privateKey")).isTrue();
    // a misspelling need not look secret: hence no value of an unknown key is ever shown
    assertThat(SecretSettings.looksSecret("sluice.auth.clusterSecert")).isFalse();
    assertThat(SecretSettings.looksSecret("sluice.auth.CLUSTERSECRETFILE")).isTrue();
    assertThat(SecretSettings.looksSecret("sluice.memory.max")).isFalse();
  }

  @Test
  void redactsTheValuesOfSecretLookingKeysOnly() {
    Map<String, String> shown =
        SecretSettings.redacted(
            Map.of("sluice.auth.appSecret", "s3cr3t", "sluice.memory.max", "2g"));

    assertThat(shown)
        .containsEntry("sluice.auth.appSecret", SecretSettings.REDACTED)
        .containsEntry("sluice.memory.max", "2g");
  }

  @Test
  void aConfShowsNoSecretValue() {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                "sluice.auth.clusterSecret", "s3cr3t",
                "sluice.admin.Token", "t0k3n",
                "sluice.auth.clusterSecert", "m1sspelt",
                "sluice.memory.max", "2g"));

    assertThat(conf.toString())
        .doesNotContain("s3cr3t", "t0k3n", "m1sspelt")
        .contains("sluice.auth.clusterSecert", "sluice.memory.max=2g");
  }

  @Test
  void aParseErrorShowsTheValueOfAPlainKeyButNotOfASecretLookingOne() {
    assertThatThrownBy(() -> ConfigValues.parseInt("sluice.read.prefetchChunks", "x1"))
        .hasMessageContaining("'x1'");
    assertThatThrownBy(() -> ConfigValues.parseInt("sluice.tls.keyCount", "s3cr3t"))
        .hasMessageContaining("sluice.tls.keyCount")
        .hasMessageNotContaining("s3cr3t");
  }
}
