#include "apps/report_render.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/io.hpp"

namespace tg::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string thousands(double v) {
  if (v >= 1e6) return fixed(v / 1e6, 2) + "M";
  if (v >= 1e3) return fixed(v / 1e3, 1) + "k";
  return fixed(v, 0);
}

std::string duration(double s) {
  return s >= 90 ? fixed(s / 60, 1) + " min" : fixed(s, 0) + " s";
}

json load(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + ": not valid JSON: " + e.what());
  }
}
}  // namespace

std::string mean_spread(const json& row, const std::string& metric, int decimals) {
  if (!row.contains(metric)) return "-";
  const json& m = row.at(metric);
  std::string s = fixed(m.at("mean").get<double>(), decimals);
  if (m.at("n").get<size_t>() > 1) s += " ± " + fixed(m.at("std").get<double>(), decimals);
  return s;
}

std::string embeddings_table(const json& summary) {
  std::ostringstream out;
  out << "| model | embedding | trainable params | valid ppl | test ppl | train ppl | wall time | "
         "train tokens/s | runs |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : summary.at("rows")) {
    out << "| " << r.at("model").get<std::string>() << " | " << r.at("mode").get<std::string>()
        << " | " << thousands(r.at("trainable_params").at("mean").get<double>()) << " | "
        << mean_spread(r, "valid_ppl") << " | " << mean_spread(r, "test_ppl") << " | "
        << mean_spread(r, "train_ppl") << " | " << duration(r.at("wall_s").at("mean").get<double>())
        << " | " << fixed(r.at("train_tokens_per_s").at("mean").get<double>(), 0) << " | "
        << r.at("runs").get<size_t>() << " |\n";
  }
  return out.str();
}

std::string data_size_table(const json& summary) {
  std::ostringstream out;
  std::vector<double> fractions;
  for (const auto& f : summary.at("fractions")) fractions.push_back(f.get<double>());
  out << "Test perplexity (mean ± std over seeds) by the share of the training split used:\n\n| "
         "model | embedding |";
  for (double f : fractions) out << " " << fixed(100 * f, 0) << "% |";
  out << "\n|---|---|";
  for (size_t i = 0; i < fractions.size(); ++i) out << "---:|";
  out << "\n";
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& r : summary.at("rows")) {
    std::pair<std::string, std::string> k{r.at("model").get<std::string>(),
                                          r.at("mode").get<std::string>()};
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  for (const auto& [model, mode] : keys) {
    out << "| " << model << " | " << mode << " |";
    for (double f : fractions) {
      const json* row = nullptr;
      for (const auto& r : summary.at("rows"))
        if (r.at("model") == model && r.at("mode") == mode &&
            std::fabs(r.at("fraction").get<double>() - f) < 1e-9)
          row = &r;
      out << " " << (row ? mean_spread(*row, "test_ppl") : "-") << " |";
    }
    out << "\n";
  }
  return out.str();
}

std::string lifecycle_section(const json& s) {
  std::ostringstream out;
  for (const auto& run : s.at("runs")) {
    const std::string name = run.at("name").get<std::string>();
    out << "#### " << name << "\n\n";
    out << "- rows of the input table with a non-zero gradient per step: mean "
        << fixed(100 * run.at("rows_per_step_mean").get<double>(), 2) << "% (of "
        << run.at("vocab").get<size_t>() << "); over each epoch:";
    for (const auto& e : run.at("rows_per_epoch"))
      out << " " << fixed(100 * e.get<double>(), 1) << "%";
    out << "\n";
    out << "- WordSim-353 Spearman of the input embeddings "
        << fixed(run.at("wordsim_input").get<double>(), 3) << ", of the output (unembedding) rows "
        << fixed(run.at("wordsim_output").get<double>(), 3) << "\n\n";
    out << "Cosine drift of each row from its initial value (mean of 1 - cos), by training-set "
           "frequency:\n\n| epoch |";
    std::vector<std::string> bands;
    for (const auto& [band, _] : run.at("drift").at(0).at("bands").items()) bands.push_back(band);
    for (const auto& b : bands) out << " " << b << " |";
    out << "\n|---:|";
    for (size_t i = 0; i < bands.size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& d : run.at("drift")) {
      out << "| " << d.at("epoch").get<size_t>() << " |";
      for (const auto& b : bands) out << " " << fixed(d.at("bands").at(b).get<double>(), 3) << " |";
      out << "\n";
    }
    out << "\nBand sizes (rows):";
    for (const auto& [band, n] : run.at("band_sizes").items())
      out << " " << band << " " << n.get<size_t>() << ";";
    out << "\n\nNearest neighbours of probe words (input embeddings):\n\n| word | before training "
           "| after training | word2vec |\n|---|---|---|---|\n";
    for (const auto& p : run.at("neighbours")) {
      auto list = [](const json& words) {
        std::string s;
        for (const auto& w : words) s += (s.empty() ? "" : ", ") + w.get<std::string>();
        return s.empty() ? std::string("(not in vocabulary)") : s;
      };
      out << "| " << p.at("word").get<std::string>() << " | " << list(p.at("before")) << " | "
          << list(p.at("after")) << " | " << list(p.at("word2vec")) << " |\n";
    }
    out << "\n";
  }
  if (s.contains("word2vec_wordsim"))
    out << "word2vec vectors on the same training tokens: WordSim-353 Spearman "
        << fixed(s.at("word2vec_wordsim").get<double>(), 3) << ".\n";
  return out.str();
}

namespace {
// One line naming the configuration shared by a summary's runs (its base_config).
std::string training_setup(const json& summary) {
  if (!summary.contains("base_config")) return "";
  const json& c = summary["base_config"];
  std::ostringstream out;
  out << c.value("model", std::string("?")) << ", d_model " << c.value("d_model", 0) << ", "
      << c.value("layers", 0) << " layers, " << c.value("heads", 0) << " heads, context "
      << c.value("context", 0) << ", batch " << c.value("batch", 0) << ", "
      << c.value("optimizer", std::string("?")) << " lr " << c.value("lr", 0.0) << ", "
      << c.value("warmup", 0) << " warm-up steps, " << c.value("schedule", std::string("?"))
      << ", dropout " << fixed(c.value("dropout", 0.0), 2) << ", up to " << c.value("epochs", 0)
      << " epochs, patience " << c.value("patience", 0) << ".";
  return out.str();
}

// "| this repository: <label>, <model> <mode> (N runs, mean) | ppl ± sd |" for the row with
// the lowest mean test perplexity.
std::string best_row_line(const json& emb, const std::string& label) {
  const json* best = nullptr;
  for (const auto& r : emb.at("rows"))
    if (!best ||
        r.at("test_ppl").at("mean").get<double>() < best->at("test_ppl").at("mean").get<double>())
      best = &r;
  if (!best) return "";
  const size_t runs = best->at("runs").get<size_t>();
  std::ostringstream out;
  out << "| this repository: " << label << ", " << best->at("model").get<std::string>() << " "
      << best->at("mode").get<std::string>() << " (" << runs << (runs == 1 ? " run" : " runs, mean")
      << ") | " << mean_spread(*best, "test_ppl") << " |\n";
  return out.str();
}
}  // namespace

std::string bengio_reference_table(const json* emb, const json* longer) {
  std::ostringstream out;
  out << "| model | Brown test perplexity |\n|---|---:|\n"
      << "| Bengio et al. 2003: best neural network (MLP + trigram mixture) | 252 |\n"
      << "| Bengio et al. 2003: best n-gram (class-based back-off) | 312 |\n"
      << "| Bengio et al. 2003: Kneser-Ney 5-gram | 321 |\n";
  if (longer) out << best_row_line(*longer, "longer training (section 1b)");
  if (emb) out << best_row_line(*emb, "best row of section 1");
  return out.str();
}
namespace {
// Writes a data file and a gnuplot script, runs gnuplot; returns the Markdown image line or "".
std::string plot(const fs::path& dir, const std::string& name, const std::string& data,
                 const std::string& script) {
  const fs::path dat = dir / (name + ".dat"), gp = dir / (name + ".gp"),
                 png = dir / (name + ".png");
  atomic_write(dat.string(), [&](std::ostream& o) { o << data; });
  atomic_write(gp.string(), [&](std::ostream& o) {
    o << "set terminal pngcairo size 900,520 font ',11'\nset output '" << png.string()
      << ".tmp'\nset datafile separator '\\t'\nset key outside right\nset grid\n"
      << script;
  });
  const std::string command = "gnuplot '" + gp.string() + "' 2>/dev/null";
  if (std::system(command.c_str()) != 0) return "";
  fs::rename(png.string() + ".tmp", png);
  fs::remove(dat);
  fs::remove(gp);
  // Linked relative to REPORT.md, one folder up.
  return "![" + name + "](" + (dir.filename() / png.filename()).string() + ")\n\n";
}
}  // namespace

std::string render_report(const std::string& results_dir, bool plots) {
  const fs::path dir(results_dir);
  const json emb = load(dir / "embeddings" / "summary.json");
  const json size = load(dir / "data_size" / "summary.json");
  const json life = load(dir / "lifecycle" / "summary.json");
  if (emb.is_null() && size.is_null() && life.is_null())
    throw std::runtime_error(
        results_dir +
        ": no experiment results (run scripts/reproduce.sh or an exp_* binary first)");
  plots = plots && std::system("command -v gnuplot >/dev/null 2>&1") == 0;
  std::ostringstream md;
  md << "# Embedding experiments: results\n\n"
     << "Rendered by `build/bin/report` from the JSON files in this folder; every number below "
        "comes from them.\n\n";
  if (!emb.is_null()) {
    md << "## 1. Frozen pretrained vs learned embeddings (and tied vs untied)\n\n"
       << emb.value("data", "") << "\n\n";
    if (emb.contains("word2vec"))
      md << "word2vec (skip-gram, trained on the training split only): WordSim-353 Spearman "
         << fixed(emb["word2vec"]["wordsim353"].get<double>(), 3) << ", "
         << fixed(emb["word2vec"]["seconds"].get<double>(), 1) << " s.\n\n";
    md << embeddings_table(emb)
       << "\nppl = perplexity; mean ± sample standard deviation over seeds. Valid/test: full "
          "splits "
       << "with the parameters of the best validation epoch; train ppl: first 50,000 training "
          "tokens in evaluation mode "
       << "(a gap between train and valid ppl shows over-fitting). Wall time includes "
          "evaluation.\n\n";
    if (plots) {
      std::ostringstream data, script;
      int index = 0;
      script << "set xlabel 'epoch'\nset ylabel 'validation perplexity'\nset logscale y\nplot ";
      for (const auto& run : emb["runs"]) {
        if (run["seed"] != emb["runs"][0]["seed"]) continue;
        data << "# " << run["model"].get<std::string>() << " " << run["mode"].get<std::string>()
             << "\n";
        for (const auto& e : run["epochs"])
          data << e["epoch"].get<size_t>() << "\t" << e["valid_ppl"].get<double>() << "\n";
        data << "\n\n";
        script << (index ? ", " : "") << "'" << (dir / "embeddings" / "valid_curves.dat").string()
               << "' index " << index << " with linespoints title '"
               << run["model"].get<std::string>() << " " << run["mode"].get<std::string>() << "'";
        ++index;
      }
      script << "\n";
      md << plot(dir / "embeddings", "valid_curves", data.str(), script.str());
    }
  }
  // The runs of `scripts/reproduce.sh --target` (longer training), when they sit next to the
  // full profile's results, get their own table and a line in the reference table.
  const json longer = load(dir / "target" / "embeddings" / "summary.json");
  if (!longer.is_null())
    md << "## 1b. Longer training: the runs below 252\n\n"
       << "`scripts/reproduce.sh --target`, results in `target/`: " << training_setup(longer)
       << "\n\n"
       << embeddings_table(longer) << "\n";
  md << "## Reference: Bengio et al. (2003) on the same protocol\n\n"
     << bengio_reference_table(emb.is_null() ? nullptr : &emb, longer.is_null() ? nullptr : &longer)
     << "\n";
  if (!size.is_null()) {
    md << "## 2. How much data: where does pretraining help?\n\n"
       << size.value("data", "") << "\n\n"
       << data_size_table(size) << "\n";
    if (plots) {
      std::ostringstream data, script;
      int index = 0;
      script
          << "set xlabel 'training tokens'\nset ylabel 'test perplexity'\nset logscale xy\nplot ";
      std::vector<std::string> seen;
      for (const auto& r : size["rows"]) {
        const std::string key = r["model"].get<std::string>() + " " + r["mode"].get<std::string>();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        data << "# " << key << "\n";
        for (const auto& q : size["rows"])
          if (q["model"] == r["model"] && q["mode"] == r["mode"])
            data << q["train_tokens"].get<double>() << "\t" << q["test_ppl"]["mean"].get<double>()
                 << "\n";
        data << "\n\n";
        script << (index ? ", " : "") << "'" << (dir / "data_size" / "data_size.dat").string()
               << "' index " << index << " with linespoints title '" << key << "'";
        ++index;
      }
      script << "\n";
      md << plot(dir / "data_size", "data_size", data.str(), script.str());
    }
  }
  if (!life.is_null()) {
    md << "## 3. The life cycle of an embedding table\n\n"
       << life.value("data", "") << "\n\n"
       << lifecycle_section(life);
    if (plots) {
      std::ostringstream data, script;
      int index = 0;
      script << "set xlabel 'epoch'\nset ylabel 'mean cosine drift from initial row'\nplot ";
      for (const auto& run : life["runs"]) {
        for (const auto& [band, _] : run["drift"][0]["bands"].items()) {
          data << "# " << run["name"].get<std::string>() << " " << band << "\n";
          for (const auto& d : run["drift"])
            data << d["epoch"].get<size_t>() << "\t" << d["bands"][band].get<double>() << "\n";
          data << "\n\n";
          script << (index ? ", " : "") << "'" << (dir / "lifecycle" / "drift.dat").string()
                 << "' index " << index << " with linespoints title '"
                 << run["name"].get<std::string>() << ": " << band << "'";
          ++index;
        }
      }
      script << "\n";
      md << plot(dir / "lifecycle", "drift", data.str(), script.str());
    }
  }
  const std::string text = md.str();
  atomic_write((dir / "REPORT.md").string(), [&](std::ostream& o) { o << text; });
  return text;
}

}  // namespace tg::report
