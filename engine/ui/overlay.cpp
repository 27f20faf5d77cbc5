// ImGui set-up, the standard panel (FPS, surface, info lines, timings, parameters) and rendering.
#include "duet/engine/ui/overlay.hpp"

#include "duet/engine/app/sample.hpp"
#include "duet/engine/error.hpp"
#include "duet/engine/platform/surface.hpp"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <variant>

namespace duet::engine {

Overlay::Overlay(Surface& surface) : m_window(surface.glfwWindow() != nullptr) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; // never drop imgui.ini into the working directory
    ImGui::StyleColorsDark();
    if (m_window &&
        !ImGui_ImplGlfw_InitForOpenGL(static_cast<GLFWwindow*>(surface.glfwWindow()), true)) {
        ImGui::DestroyContext();
        throw Error("ImGui: GLFW backend failed to initialise");
    }
    if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
        if (m_window)
            ImGui_ImplGlfw_Shutdown();
        ImGui::DestroyContext();
        throw Error("ImGui: OpenGL3 backend failed to initialise");
    }
}

Overlay::~Overlay() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_window)
        ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
}

bool Overlay::wantsMouse() const {
    return ImGui::GetIO().WantCaptureMouse;
}
bool Overlay::wantsKeyboard() const {
    return ImGui::GetIO().WantCaptureKeyboard;
}

namespace {

void drawParameters(Parameters& parameters) {
    for (const Parameters::Entry& e : parameters.entries()) {
        const char* label = e.name.c_str();
        if (auto* f = std::get_if<Parameters::Float>(&e.kind))
            ImGui::SliderFloat(label, f->value, f->min, f->max);
        else if (auto* i = std::get_if<Parameters::Int>(&e.kind))
            ImGui::SliderInt(label, i->value, i->min, i->max);
        else if (auto* b = std::get_if<Parameters::Bool>(&e.kind))
            ImGui::Checkbox(label, b->value);
        else if (auto* c = std::get_if<Parameters::Choice>(&e.kind)) {
            const char* current = *c->value >= 0 && size_t(*c->value) < c->names.size()
                                      ? c->names[*c->value].c_str()
                                      : "?";
            if (ImGui::BeginCombo(label, current)) {
                for (size_t k = 0; k < c->names.size(); ++k)
                    if (ImGui::Selectable(c->names[k].c_str(), int(k) == *c->value))
                        *c->value = int(k);
                ImGui::EndCombo();
            }
        }
    }
}

} // namespace

void Overlay::draw(double dt, int width, int height, const Panel& panel) {
    ImGuiIO& io = ImGui::GetIO();
    ImGui_ImplOpenGL3_NewFrame();
    if (m_window) {
        ImGui_ImplGlfw_NewFrame();
    } else {
        io.DisplaySize = ImVec2(float(width), float(height));
        io.DisplayFramebufferScale = ImVec2(1, 1);
        io.DeltaTime = dt > 0 ? float(dt) : 1.0f / 60.0f;
    }
    ImGui::NewFrame();

    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.85f);
    ImGui::Begin(("Duet: " + panel.title).c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize);
    ImGui::Text("%.1f FPS (%.2f ms)", panel.fps, panel.fps > 0 ? 1000.0 / panel.fps : 0.0);
    // Wrap long lines (surface, renderer) so the panel stays narrow on small framebuffers.
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24.0f);
    ImGui::TextUnformatted(panel.surface.c_str());
    if (Context* ctx = panel.context) {
        for (const auto& [key, value] : ctx->info())
            ImGui::TextWrapped("%s: %s", key.c_str(), value.c_str());
        if (ImGui::CollapsingHeader("Timings (ms, last / mean)", ImGuiTreeNodeFlags_DefaultOpen)) {
            for (const Stats::Summary& s : ctx->stats().summarize())
                if (s.count)
                    ImGui::Text("%-16s %8.3f %8.3f", s.name.c_str(), s.last * 1e3, s.mean * 1e3);
        }
    }
    ImGui::PopTextWrapPos();
    if (panel.parameters && !panel.parameters->entries().empty() &&
        ImGui::CollapsingHeader("Parameters", ImGuiTreeNodeFlags_DefaultOpen))
        drawParameters(*panel.parameters);
    if (panel.sampleUi)
        panel.sampleUi();
    ImGui::End();

    ImGui::Render();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

} // namespace duet::engine
