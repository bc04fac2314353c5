package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import com.beust.jcommander.ParameterException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The SVG of {@code shuffle-bench <command> --chart}: well-formed, one labelled bar per value; and
 * the paths {@code --chart} refuses.
 */
class BarChartTest {
  /** Parses an SVG document, failing on one that is not well-formed. */
  static Document parse(String svg) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(true);
    return factory
        .newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  static List<Element> withClass(Document doc, String tag, String cssClass) {
    List<Element> found = new ArrayList<>();
    NodeList nodes = doc.getElementsByTagName(tag);
    for (int i = 0; i < nodes.getLength(); i++) {
      Element e = (Element) nodes.item(i);
      if (e.getAttribute("class").equals(cssClass)) {
        found.add(e);
      }
    }
    return found;
  }

  /** The contents of the text elements of {@code cssClass}: title, legend, group, value... */
  static List<String> texts(Document doc, String cssClass) {
    List<String> found = new ArrayList<>();
    for (Element e : withClass(doc, "text", cssClass)) {
      found.add(e.getTextContent());
    }
    return found;
  }

  private static Element bar(Document doc, String group, String series) {
    for (Element e : withClass(doc, "rect", "bar")) {
      if (e.getAttribute("data-group").equals(group)
          && e.getAttribute("data-series").equals(series)) {
        return e;
      }
    }
    throw new AssertionError("no bar for " + group + " / " + series);
  }

  private static int number(Element e, String attribute) {
    return Integer.parseInt(e.getAttribute(attribute));
  }

  @Test
  void drawsOneLabelledBarPerWorkloadAndSeries(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("charts/spark.svg");
    new BarChart("Spark job time", "job seconds", List.of("built-in", "sluice"))
        .group("repartition", 10.2, 12.7)
        .group("small-blocks", 38.3, 23.9)
        .group("skew-join", 9.0, 3.9)
        .write(file);

    Document doc = parse(Files.readString(file));

    assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
    assertThat(doc.getDocumentElement().getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");
    assertThat(withClass(doc, "rect", "bar")).hasSize(6);
    assertThat(texts(doc, "group")).containsExactly("repartition", "small-blocks", "skew-join");
    assertThat(texts(doc, "legend")).containsExactly("built-in", "sluice");
    assertThat(texts(doc, "value")).containsExactly("10.2", "12.7", "38.3", "23.9", "9.00", "3.90");
    assertThat(texts(doc, "title")).containsExactly("Spark job time");
    assertThat(texts(doc, "unit")).containsExactly("job seconds");
    // heights follow the values and every bar stands on the same baseline
    Element slow = bar(doc, "small-blocks", "built-in");
    Element fast = bar(doc, "skew-join", "sluice");
    assertThat(number(slow, "height")).isGreaterThan(number(fast, "height") * 9);
    assertThat(number(slow, "y") + number(slow, "height"))
        .isEqualTo(number(fast, "y") + number(fast, "height"));
    assertThat(slow.getAttribute("fill")).isNotEqualTo(fast.getAttribute("fill"));
    // ticks every 10 s from 0, the highest covering the highest bar
    assertThat(texts(doc, "tick")).containsExactly("0", "10", "20", "30", "40");
  }

  @Test
  void escapesNamesAndSkipsMissingValues() throws Exception {
    String svg =
        new BarChart("a <b> & \"c\"", "s", List.of("built-in", "sluice", "sluice & replicas"))
            .group("x<y", 1, 2, Double.NaN)
            .svg();

    Document doc = parse(svg);

    assertThat(withClass(doc, "rect", "bar")).hasSize(2);
    assertThat(texts(doc, "title")).containsExactly("a <b> & \"c\"");
    assertThat(texts(doc, "group")).containsExactly("x<y");
    assertThat(texts(doc, "legend")).contains("sluice & replicas");
  }

  @Test
  void aLongGroupNameWidensItsGroupAndNamesMayRepeat() throws Exception {
    String svg =
        new BarChart("t", "MB/s", List.of("raw disk", "sluice"))
            .group("16 pushers, checksums off", 100, 200)
            .group("16 pushers, checksums off", 110, 210)
            .group("x", 1, 2)
            .svg();

    Document doc = parse(svg);

    assertThat(withClass(doc, "rect", "bar")).hasSize(6);
    assertThat(texts(doc, "group"))
        .containsExactly("16 pushers, checksums off", "16 pushers, checksums off", "x");
    List<Element> labels = withClass(doc, "text", "group");
    int apart = number(labels.get(1), "x") - number(labels.get(0), "x");
    assertThat(apart).isGreaterThanOrEqualTo(7 * "16 pushers, checksums off".length());
  }

  @Test
  void theChartFileMustBeInADirectoryThatExists(@TempDir Path dir) throws Exception {
    assertThat(ChartOption.check("--chart", dir.resolve("a.svg").toString()))
        .isEqualTo(dir.resolve("a.svg").toAbsolutePath());
    for (String bad : List.of(dir.resolve("missing/a.svg").toString(), dir.toString(), "", "  ")) {
      assertThatThrownBy(() -> ChartOption.check("--chart", bad))
          .isInstanceOf(ParameterException.class)
          .hasMessageStartingWith("--chart");
    }
    assertThatThrownBy(() -> ChartOption.check("--chart", dir.resolve("missing/a.svg").toString()))
        .hasMessageContaining("does not exist")
        .hasMessageContaining(dir.resolve("missing").toString());
    Path file = Files.writeString(dir.resolve("b.svg"), "");
    assertThatThrownBy(() -> ChartOption.check("--chart", file.resolve("c.svg").toString()))
        .hasMessageContaining("does not exist");
  }

  @Test
  void refusesAGroupWithTheWrongNumberOfValues() {
    BarChart chart = new BarChart("t", "s", List.of("built-in", "sluice"));

    assertThatThrownBy(() -> chart.group("w", 1.0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void ticksAreOneTwoOrFiveTimesAPowerOfTen() {
    assertThat(BarChart.tickStep(38.3)).isEqualTo(10);
    assertThat(BarChart.tickStep(9.0)).isEqualTo(2);
    assertThat(BarChart.tickStep(0.7)).isEqualTo(0.2, offset(1e-9));
    assertThat(BarChart.tickStep(0)).isEqualTo(1);
    assertThat(BarChart.tick(0.4, 0.2)).isEqualTo("0.4");
    assertThat(BarChart.tick(0.05, 0.05)).isEqualTo("0.05");
    assertThat(BarChart.tick(25, 5)).isEqualTo("25");
  }
}
