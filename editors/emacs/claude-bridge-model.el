;;; claude-bridge-model.el --- Conversation state of claude-bridge sessions  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The model part of claude-bridge.el: per session, the conversation as
;; data built from the bridge's `session/event' notifications: user
;; prompts, assistant text accumulated from deltas, thinking, tool cards
;; (use and result), pending permission prompts, notices, each turn's
;; cost and context usage, and the session's state.  Nothing here draws:
;; each change is recorded on the session (`claude-bridge-session-dirty')
;; for the view to redraw in batches, and text that streamed in since
;; the last redraw waits in the item's `unseen' chunks.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(cl-defstruct (claude-bridge-item (:constructor claude-bridge-item--make)
                                  (:copier nil))
  "One entry of a conversation."
  (kind nil :documentation "user, text, thinking, tool, result, permission or notice.")
  (text "" :documentation "Text drawn so far (for tool: the one-line summary).")
  (seen nil :documentation "Chunks streamed and drawn after `text', newest first.")
  (unseen nil :documentation "Chunks streamed since the last redraw, newest first.")
  (open nil :documentation "Non-nil while deltas may still extend the item.")
  (props nil :documentation "Kind-specific plist (tool input, result, cost...).")
  (start nil :documentation "View: marker where the item begins.")
  (end nil :documentation "View: marker where the item ends.")
  (expanded nil :documentation "View: non-nil when the collapsible body shows."))

(cl-defstruct (claude-bridge-session (:constructor claude-bridge-session--make)
                                     (:copier nil))
  "A bridge session and its conversation."
  (id nil :documentation "The bridge's session id (nil until created).")
  (cwd nil :documentation "The working directory.")
  (pid nil :documentation "The CLI's process id.")
  (model nil :documentation "The model, as last reported or set.")
  (models nil :documentation "Models the CLI offers (a list of plists).")
  (permission-mode nil :documentation "The permission mode.")
  (claude-session-id nil :documentation "The CLI's own session id.")
  (state 'new :documentation "new, starting, idle, running, exited or closed.")
  (total-cost 0.0 :documentation "USD spent by the CLI process.")
  (turn-start-cost 0.0 :documentation "The total cost when the turn began.")
  (context nil :documentation "Last context usage plist of the CLI.")
  (items nil :documentation "Conversation items, newest first.")
  (open-items nil :documentation "Alist ((KIND . PARENT) . ITEM) of streaming items.")
  (tools nil :documentation "Hash table: toolUseId -> tool item.")
  (permissions nil :documentation "Pending permission requests, oldest first.")
  (dirty nil :documentation "Items changed since the last redraw.")
  (deltas 0 :documentation "textDelta events received.")
  (last-result nil :documentation "The last turn result (a plist).")
  (buffer nil :documentation "View: the chat buffer.")
  (on-change nil :documentation "Function of (SESSION) called after each change."))

;; Item props are changed through this, so that an empty plist works too.
(defun claude-bridge-model-put (item key value)
  "Set property KEY of ITEM to VALUE."
  (setf (claude-bridge-item-props item)
        (plist-put (claude-bridge-item-props item) key value)))

(defun claude-bridge-model-make-session (cwd)
  "Return a new session model for CWD."
  (claude-bridge-session--make :cwd cwd :tools (make-hash-table :test #'equal)))

(defun claude-bridge-model--changed (session &optional item)
  "Record that ITEM of SESSION changed and tell its listener."
  (when (and item (not (memq item (claude-bridge-session-dirty session))))
    (push item (claude-bridge-session-dirty session)))
  (when-let ((fn (claude-bridge-session-on-change session)))
    (funcall fn session)))

(defun claude-bridge-model-add (session kind text &rest props)
  "Append an item of KIND with TEXT and PROPS to SESSION; return it."
  (let ((item (claude-bridge-item--make :kind kind :text (or text "")
                                        :props props)))
    (push item (claude-bridge-session-items session))
    (claude-bridge-model--changed session item)
    item))

(defun claude-bridge-model-items (session)
  "Return the items of SESSION, oldest first."
  (reverse (claude-bridge-session-items session)))

(defun claude-bridge-model-item-text (item)
  "Return the whole text of ITEM, including chunks not drawn yet."
  (if (or (claude-bridge-item-seen item) (claude-bridge-item-unseen item))
      (concat (claude-bridge-item-text item)
              (apply #'concat (reverse (claude-bridge-item-seen item)))
              (apply #'concat (reverse (claude-bridge-item-unseen item))))
    (claude-bridge-item-text item)))

(defun claude-bridge-model-mark-seen (item)
  "Mark ITEM's unseen chunks drawn and return them, newest first.
Nothing is copied: the chunks move to the item's `seen' list."
  (let ((new (claude-bridge-item-unseen item)))
    (setf (claude-bridge-item-seen item) (append new (claude-bridge-item-seen item))
          (claude-bridge-item-unseen item) nil)
    new))

(defun claude-bridge-model--text-equal-p (item text)
  "Return non-nil when the whole text of ITEM is TEXT, without building it."
  (let ((pos (length text))
        (ok t))
    ;; Walk the chunks from the newest (the end of the text) backwards.
    (dolist (chunk (claude-bridge-item-unseen item))
      (setq ok (and ok (>= pos (length chunk))
                    (eq t (compare-strings text (- pos (length chunk)) pos chunk nil nil))
                    (setq pos (- pos (length chunk))))))
    (dolist (chunk (claude-bridge-item-seen item))
      (setq ok (and ok (>= pos (length chunk))
                    (eq t (compare-strings text (- pos (length chunk)) pos chunk nil nil))
                    (setq pos (- pos (length chunk))))))
    (and ok (= pos (length (claude-bridge-item-text item)))
         (eq t (compare-strings text 0 pos (claude-bridge-item-text item) nil nil)))))

(defun claude-bridge-model-take-unseen (item)
  "Mark ITEM's unseen chunks drawn and return them as one string.
The text is not copied as it grows: streaming makes little garbage."
  (let ((new (apply #'concat (nreverse (claude-bridge-item-unseen item)))))
    (setf (claude-bridge-item-unseen item) nil)
    (unless (string-empty-p new) (push new (claude-bridge-item-seen item)))
    new))

(defun claude-bridge-model-assistant-text (session)
  "Return the text of SESSION's last assistant reply (its text items)."
  (let (parts)
    (cl-loop for item in (claude-bridge-session-items session)
             until (eq (claude-bridge-item-kind item) 'user)
             when (eq (claude-bridge-item-kind item) 'text)
             do (push (claude-bridge-model-item-text item) parts))
    (string-join parts "")))

(defun claude-bridge-model-tool (session tool-use-id)
  "Return SESSION's tool item for TOOL-USE-ID, or nil."
  (gethash tool-use-id (claude-bridge-session-tools session)))

(defun claude-bridge-model--close-open (session &optional parent)
  "Close SESSION's streaming items of PARENT (a parentToolUseId or nil)."
  (setf (claude-bridge-session-open-items session)
        (cl-remove-if (lambda (entry)
                        (when (equal (cdar entry) parent)
                          (setf (claude-bridge-item-open (cdr entry)) nil)
                          t))
                      (claude-bridge-session-open-items session))))

(defun claude-bridge-model--stream (session kind parent chunk)
  "Append CHUNK to SESSION's streaming item of KIND for PARENT."
  (let* ((key (cons kind parent))
         (item (alist-get key (claude-bridge-session-open-items session)
                          nil nil #'equal)))
    (unless item
      (claude-bridge-model--close-open session parent)
      (setq item (claude-bridge-model-add session kind "" :parent parent))
      (setf (claude-bridge-item-open item) t)
      (push (cons key item) (claude-bridge-session-open-items session)))
    (push chunk (claude-bridge-item-unseen item))
    (claude-bridge-model--changed session item)))

(defun claude-bridge-model--complete (session kind parent text &optional aborted)
  "Finish SESSION's streaming item of KIND for PARENT with its whole TEXT.
Without a streaming item (no deltas came), add one.  ABORTED marks a
reply cut short by an interrupt."
  (let* ((key (cons kind parent))
         (item (alist-get key (claude-bridge-session-open-items session)
                          nil nil #'equal)))
    (if (null item)
        (progn
          (claude-bridge-model--close-open session parent)
          (setq item (claude-bridge-model-add session kind text :parent parent)))
      (unless (claude-bridge-model--text-equal-p item text)
        ;; Deltas and the final block disagree: the block is the truth.
        (setf (claude-bridge-item-unseen item) nil
              (claude-bridge-item-seen item) nil
              (claude-bridge-item-text item) text)
        (claude-bridge-model-put item :redraw t))
      (setf (claude-bridge-item-open item) nil)
      (setf (claude-bridge-session-open-items session)
            (cl-remove key (claude-bridge-session-open-items session)
                       :key #'car :test #'equal)))
    (when aborted
      (claude-bridge-model-put item :aborted t))
    (claude-bridge-model--changed session item)
    item))

(defun claude-bridge-model-tool-summary (name input)
  "Return a one-line summary of a call of tool NAME with INPUT (a plist)."
  (let ((detail
         (or (plist-get input :command)
             (plist-get input :file_path)
             (plist-get input :path)
             (plist-get input :pattern)
             (plist-get input :url)
             (plist-get input :description)
             (let ((qs (plist-get input :questions)))
               (and (vectorp qs) (> (length qs) 0)
                    (plist-get (aref qs 0) :question)))
             "")))
    (setq detail (car (split-string (format "%s" detail) "\n")))
    (if (string-empty-p detail) name (format "%s: %s" name detail))))

(defun claude-bridge-model-apply (session event &optional replay)
  "Apply EVENT, a `session/event' event plist, to SESSION.
REPLAY is non-nil for past events of a resumed conversation."
  (let ((type (plist-get event :type))
        (parent (plist-get event :parentToolUseId)))
    (pcase type
      ("init"
       (setf (claude-bridge-session-model session)
             (or (plist-get event :model) (claude-bridge-session-model session)))
       (when-let ((mode (plist-get event :permissionMode)))
         (setf (claude-bridge-session-permission-mode session) mode))
       (when-let ((id (plist-get event :claudeSessionId)))
         (setf (claude-bridge-session-claude-session-id session) id))
       (claude-bridge-model--changed session))
      ("status"
       (when-let ((mode (plist-get event :permissionMode)))
         (setf (claude-bridge-session-permission-mode session) mode)
         (claude-bridge-model--changed session)))
      ("textDelta"
       (cl-incf (claude-bridge-session-deltas session))
       (claude-bridge-model--stream session 'text parent (plist-get event :text)))
      ("thinkingDelta"
       (claude-bridge-model--stream session 'thinking parent
                                    (plist-get event :thinking)))
      ("assistantText"
       (claude-bridge-model--complete session 'text parent (plist-get event :text)
                                      (eq (plist-get event :aborted) t)))
      ("thinking"
       (claude-bridge-model--complete session 'thinking parent
                                      (plist-get event :thinking)))
      ("toolUse"
       (claude-bridge-model--close-open session parent)
       (let* ((name (plist-get event :name))
              (input (plist-get event :input))
              (item (claude-bridge-model-add
                     session 'tool (claude-bridge-model-tool-summary name input)
                     :id (plist-get event :toolUseId) :name name :input input
                     :parent parent)))
         (puthash (plist-get event :toolUseId) item
                  (claude-bridge-session-tools session))))
      ("toolResult"
       (claude-bridge-model--close-open session parent)
       (let ((item (claude-bridge-model-tool session (plist-get event :toolUseId))))
         (when item
           (claude-bridge-model-put item :result (plist-get event :content))
           (claude-bridge-model-put item :error (eq (plist-get event :isError) t))
           (claude-bridge-model--changed session item))))
      ("userText"
       (let ((text (plist-get event :text)))
         (claude-bridge-model--close-open session parent)
         (if (or replay (not (string-prefix-p "[Request interrupted" text)))
             (claude-bridge-model-add session 'user text :replay replay)
           (claude-bridge-model-add session 'notice "Interrupted."))))
      ("result"
       (claude-bridge-model--close-open session nil)
       (let* ((total (or (plist-get event :totalCostUsd) 0.0)))
         (when (> total 0)
           (setf (claude-bridge-session-total-cost session) total))
         (when (eq (plist-get event :isError) t)
           (unless (member (plist-get event :terminalReason)
                           '("aborted_streaming" "aborted_tools"))
             (claude-bridge-model-add
              session 'notice
              (format "Error: %s" (or (plist-get event :text)
                                      (plist-get event :subtype))))))))
      ("permissionAutoDenied"
       (claude-bridge-model-forget-permission session (plist-get event :requestId))
       (claude-bridge-model-add session 'notice (plist-get event :message)))
      ("lagged"
       (claude-bridge-model-add
        session 'notice (format "%s events were dropped (Emacs fell behind)."
                                (plist-get event :missed))))
      ("invalidLine"
       (claude-bridge-model-add session 'notice
                                (format "The CLI printed: %s" (plist-get event :line))))
      (_ nil))))

(defun claude-bridge-model-turn-started (session prompt &optional item)
  "Record that PROMPT was sent to SESSION (a new turn or a live message).
ITEM is the prompt's item when the chat shows it already."
  ;; A live message leaves the streaming reply open: it goes on above it.
  (unless (eq (claude-bridge-session-state session) 'running)
    (claude-bridge-model--close-open session nil)
    (setf (claude-bridge-session-turn-start-cost session)
          (claude-bridge-session-total-cost session)
          (claude-bridge-session-state session) 'running))
  (if item
      (claude-bridge-model--changed session item)
    (claude-bridge-model-add session 'user prompt)))

(defun claude-bridge-model-turn-ended (session result)
  "Record the end of SESSION's turn with RESULT (a `session/send' result).
Return the summary item."
  (claude-bridge-model--close-open session nil)
  (let ((total (or (plist-get result :totalCostUsd) 0.0)))
    (setf (claude-bridge-session-total-cost session)
          (max total (claude-bridge-session-total-cost session))
          (claude-bridge-session-last-result session) result
          (claude-bridge-session-permissions session) nil)
    (when (eq (claude-bridge-session-state session) 'running)
      (setf (claude-bridge-session-state session) 'idle))
    (when-let ((id (plist-get result :claudeSessionId)))
      (setf (claude-bridge-session-claude-session-id session) id))
    (claude-bridge-model-add session 'result nil
                             :cost (or (plist-get result :costUsd) 0.0)
                             :total total
                             :duration (plist-get result :durationMs)
                             :interrupted (eq (plist-get result :interrupted) t)
                             :usage (plist-get result :usage))))

(defun claude-bridge-model-set-context (session item usage)
  "Record context USAGE (the CLI's plist) on SESSION and its summary ITEM."
  (setf (claude-bridge-session-context session) usage)
  (when item
    (claude-bridge-model-put item :context usage)
    (claude-bridge-model-put item :redraw t)
    (claude-bridge-model--changed session item)))

(defun claude-bridge-model-add-permission (session request)
  "Record REQUEST (a `session/requestPermission' params plist) on SESSION."
  (setf (claude-bridge-session-permissions session)
        (append (claude-bridge-session-permissions session) (list request)))
  (claude-bridge-model-add
   session 'permission
   (format "Permission asked: %s"
           (claude-bridge-model-tool-summary (plist-get request :toolName)
                                             (plist-get request :input)))
   :request-id (plist-get request :requestId)))

(defun claude-bridge-model-forget-permission (session request-id &optional answer)
  "Remove SESSION's pending permission REQUEST-ID, which ended as ANSWER."
  (setf (claude-bridge-session-permissions session)
        (cl-remove request-id (claude-bridge-session-permissions session)
                   :key (lambda (r) (plist-get r :requestId)) :test #'equal))
  (when answer
    (dolist (item (claude-bridge-session-items session))
      (when (and (eq (claude-bridge-item-kind item) 'permission)
                 (equal (plist-get (claude-bridge-item-props item) :request-id)
                        request-id))
        (claude-bridge-model-put item :answer answer)
        (claude-bridge-model--changed session item)))))

(defun claude-bridge-model-exited (session reason)
  "Record that SESSION's process is gone, for REASON (a string)."
  (claude-bridge-model--close-open session nil)
  (setf (claude-bridge-session-state session) 'exited
        (claude-bridge-session-permissions session) nil)
  (claude-bridge-model-add session 'notice reason))

(provide 'claude-bridge-model)
;;; claude-bridge-model.el ends here
