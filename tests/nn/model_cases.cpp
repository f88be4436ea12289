#include "nn/model_cases.hpp"

#include <set>
#include <stdexcept>

namespace tg::testing {

const TensorFile& golden_models() {
  static const TensorFile file = load_safetensors(TAPEGRAD_GOLDEN_DIR "/models.safetensors");
  return file;
}

std::unique_ptr<nn::LanguageModel> golden_model(const std::string& name) {
  std::unique_ptr<nn::LanguageModel> model;
  if (name.rfind("gpt", 0) == 0) {
    nn::GPTConfig c;
    c.vocab = 13;
    c.context = 6;
    c.d_model = 8;
    c.layers = 2;
    c.heads = 2;
    c.tied = name == "gpt_tied";
    model = std::make_unique<nn::GPT>(c);
  } else if (name.rfind("lstm", 0) == 0 || name.rfind("gru", 0) == 0) {
    nn::RNNLMConfig c;
    c.vocab = 13;
    c.cell = name.rfind("lstm", 0) == 0 ? nn::RecurrentCell::lstm : nn::RecurrentCell::gru;
    c.d_model = 6;
    c.tied = name == "gru_tied";
    c.hidden = c.tied ? 6 : 5;
    c.layers = c.tied ? 1 : 2;
    model = std::make_unique<nn::RNNLM>(c);
  } else {
    nn::NPLMConfig c;
    c.vocab = 13;
    c.ngram = 4;
    c.d_model = 6;
    c.tied = name == "nplm_tied";
    c.hidden = c.tied ? 6 : 5;
    c.direct = name == "nplm_direct";
    model = std::make_unique<nn::NPLM>(c);
  }
  const std::string prefix = name + "/param/";
  std::set<std::string> in_file, in_model;
  for (const auto& [key, t] : golden_models().tensors)
    if (key.rfind(prefix, 0) == 0) in_file.insert(key.substr(prefix.size()));
  for (const auto& [n, p] : model->named_parameters()) {
    in_model.insert(n);
    if (!in_file.count(n)) throw std::runtime_error(name + ": golden file lacks parameter " + n);
    const Tensor& src = golden_models().tensor(prefix + n);
    if (src.shape() != p.shape()) throw std::runtime_error(name + ": shape mismatch for " + n);
    Tensor dst = p;
    std::copy(src.data(), src.data() + src.numel(), dst.data());
  }
  if (in_file != in_model)
    throw std::runtime_error(name + ": golden file has parameters the model lacks");
  return model;
}

}  // namespace tg::testing
